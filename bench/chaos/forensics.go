//go:build unix

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Forensics for the foreign-conflict audit: the first few foreign
// conflicts of each writer keep L and P's per-directory state (P/dirs:
// baseline, recovery flag, rewrite records, pending record) from right
// before and right after the operation, plus the writer's recent
// operations, in the work directory — what it takes to replay the case in
// an engine test.

// keptForeign bounds the cases kept per writer.
const keptForeign = 3

// historyLen is how many recent operations a writer remembers.
const historyLen = 16

// remember appends one line to w's recent history.
func (w *writer) remember(line string) {
	w.history = append(w.history, line)
	if len(w.history) > historyLen {
		w.history = w.history[len(w.history)-historyLen:]
	}
}

// privState snapshots the per-directory private state of w (not the
// object cache).
func privState(w *writer) map[string][]byte {
	s, _ := snapshot(filepath.Join(w.priv, "dirs"))
	return s
}

// keepForeign saves one foreign-conflict case of w and returns where.
func (c *campaign) keepForeign(w *writer, lBefore, pBefore map[string][]byte, res opResult) string {
	if w.foreignKept >= keptForeign {
		return ""
	}
	w.foreignKept++
	dir := filepath.Join(c.work, fmt.Sprintf("w%02d-foreign-%d", w.id, w.foreignKept))
	lAfter, _ := snapshot(w.dir)
	saveSnapshot(filepath.Join(dir, "L-before"), lBefore)
	saveSnapshot(filepath.Join(dir, "L-after"), lAfter)
	saveSnapshot(filepath.Join(dir, "P-before"), pBefore)
	saveSnapshot(filepath.Join(dir, "P-after"), privState(w))
	hist := strings.Join(w.history, "\n") + "\n\n--- output of the operation ---\n" + res.Output
	_ = os.WriteFile(filepath.Join(dir, "history.txt"), []byte(hist), 0o644)
	return dir
}
