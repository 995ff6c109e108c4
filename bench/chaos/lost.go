//go:build unix

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The way out of BASELINE_LOST, as the refusal documents it and as an
// agent would take it: move the directory's files aside, pull into the
// emptied directory, copy the edits back. The writer's edits are its own
// file (which no other writer edits: copied back whole) and its token lines
// in the shared file (each one missing from the fresh pull is put back at
// the end of its section) and in the log file (put back at its end). Its journal is untouched: the edits are still
// pending and the next commit publishes them.
func (c *campaign) leaveLostBaseline(w *writer) error {
	aside := fmt.Sprintf("%s.aside", w.dir)
	_ = os.RemoveAll(aside)
	if err := os.Rename(w.dir, aside); err != nil {
		return err
	}
	if err := os.MkdirAll(w.dir, 0o755); err != nil {
		return err
	}
	pulled := false
	for range 20 {
		if res := c.exec(w, "pull"); res.Outcome == outOK {
			pulled = true
			break
		}
	}
	if !pulled {
		// Put the directory back as it was: the next operation is refused
		// again and the way out is taken once more.
		_ = os.RemoveAll(w.dir)
		return os.Rename(aside, w.dir)
	}
	own, err := os.ReadFile(filepath.Join(aside, ownFile(w.id)))
	if err == nil {
		if err := os.WriteFile(filepath.Join(w.dir, ownFile(w.id)), own, 0o644); err != nil {
			return err
		}
	}
	old, err := os.ReadFile(filepath.Join(aside, sharedFile))
	if err == nil {
		fresh, _ := os.ReadFile(filepath.Join(w.dir, sharedFile))
		have := map[string]bool{}
		for _, l := range strings.Split(string(fresh), "\n") {
			have[l] = true
		}
		for _, l := range strings.Split(string(old), "\n") {
			if strings.HasPrefix(l, w.tag) && !have[l] {
				if !w.insertShared(l) {
					return fmt.Errorf("cannot put %s back into %s", l, sharedFile)
				}
				have[l] = true
			}
		}
	}
	old, err = os.ReadFile(filepath.Join(aside, logFile))
	if err == nil {
		fresh, _ := os.ReadFile(filepath.Join(w.dir, logFile))
		have := map[string]bool{}
		for _, l := range strings.Split(string(fresh), "\n") {
			have[l] = true
		}
		for _, l := range strings.Split(string(old), "\n") {
			if strings.HasPrefix(l, w.tag) && !have[l] {
				if !w.appendLog(l) {
					return fmt.Errorf("cannot put %s back into %s", l, logFile)
				}
				have[l] = true
			}
		}
	}
	return os.RemoveAll(aside)
}
