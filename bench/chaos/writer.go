//go:build unix

package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// writer is one agent of the campaign: a notebook directory L, a private
// root P, and a loop of slivingdoc processes (pull, or edit + commit). Each
// edit adds one fresh token line at the end of the writer's own file, at
// the end of its section of the shared file (sections are separated by
// unchanged header lines, so concurrent inserts merge cleanly), or at the
// end of the log file every writer appends to (concurrent appends there
// merge with the remote lines first). The journal records every token
// written and every token a commit reported OK, durably, before the next
// step.
type writer struct {
	id      int
	dir     string // L
	priv    string // P
	tag     string // token prefix, unique per campaign and writer
	rng     *rand.Rand
	journal *os.File

	seq     int
	pending int // tokens written since the last OK commit
	// the part of pending in the shared file, in its own file and in the
	// log file (audit.go)
	sharedPending, ownPending, logPending int
	dupSeen                               bool     // a duplicate token line was seen in L (reported once)
	history                               []string // recent operations (forensics.go)
	foreignKept                           int      // foreign-conflict cases kept (forensics.go)

	mu  sync.Mutex
	cur *proc // running process, nil between operations
	// armed: the failpoint the next operations die at (audit.go), until
	// one did (armFired).
	armed    string
	armFired bool
	// dbl: a kill-twice in progress (double.go); while set, every
	// operation is a commit and takes its binary and failpoint from it.
	dbl *doubleKill
	// started is signalled (non-blocking) when a process starts, for a kill
	// fault waiting for one.
	started chan struct{}
}

const sharedFile = "shared.md"

// logFile is appended to by every writer, at its end: the notebook of
// issue 37's report ("# log, b1, a1, b2, ..."), where a writer killed twice
// in a row while bringing another writer's appended line into its
// directory published that line a second time. A writer in a kill-twice
// appends only there (double.go).
const logFile = "log.md"

func ownFile(id int) string { return fmt.Sprintf("w%02d.md", id) }

func sectionHeader(id int) string { return fmt.Sprintf("## section w%02d", id) }

// initialTree is the notebook the campaign starts from.
func initialTree(writers int) map[string]string {
	var shared strings.Builder
	shared.WriteString("# shared notes\n")
	for i := range writers {
		fmt.Fprintf(&shared, "%s\n", sectionHeader(i))
	}
	files := map[string]string{sharedFile: shared.String(), logFile: "# log\n"}
	for i := range writers {
		files[ownFile(i)] = fmt.Sprintf("# notes of w%02d\n", i)
	}
	return files
}

func (w *writer) setProc(p *proc) {
	w.mu.Lock()
	w.cur = p
	w.mu.Unlock()
	if p != nil {
		select {
		case w.started <- struct{}{}:
		default:
		}
	}
}

// kill waits (up to wait) for a process of w to run for aim, then sends it
// SIGKILL. It reports whether the kill landed: the process was still
// running and died of the signal.
func (w *writer) kill(ctx context.Context, aim, wait time.Duration) bool {
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		w.mu.Lock()
		p := w.cur
		w.mu.Unlock()
		if p == nil {
			select {
			case <-w.started:
			case <-time.After(50 * time.Millisecond):
			case <-ctx.Done():
			}
			continue
		}
		if d := time.Until(p.started.Add(aim)); d > 0 {
			time.Sleep(d)
		}
		w.mu.Lock()
		if w.cur != p {
			w.mu.Unlock()
			aim /= 2 // it finished first: aim earlier at the next one
			continue
		}
		p.killed.Store(true)
		err := p.cmd.Process.Kill()
		w.mu.Unlock()
		<-p.done
		if err == nil && diedOfKill(p.cmd.ProcessState) {
			return true
		}
	}
	return false
}

// record appends lines to the journal and syncs it.
func (w *writer) record(lines ...string) error {
	for _, l := range lines {
		if _, err := fmt.Fprintln(w.journal, l); err != nil {
			return err
		}
	}
	return w.journal.Sync()
}

// edit adds the next token to L and journals it as written.
func (w *writer) edit() (string, error) {
	w.seq++
	tok := fmt.Sprintf("%s-%05d", w.tag, w.seq)
	if err := w.record("WRITE " + tok); err != nil {
		return "", err
	}
	where := w.rng.IntN(3)
	w.mu.Lock()
	if w.dbl != nil {
		where = 1
	}
	w.mu.Unlock()
	switch {
	case where == 0 && w.insertShared(tok):
		w.pending++
		w.sharedPending++
		return tok, nil
	case where == 1 && w.appendLog(tok):
		w.pending++
		w.logPending++
		return tok, nil
	}
	err := w.appendOwn(tok)
	w.pending++
	w.ownPending++
	return tok, err
}

// lastEditPrefix starts the line that closes each writer's own file and
// that every edit of it rewrites: an edit modifies the line right next to
// the lines the previous edits added, which the other writers' rewrites
// bring into their directories (issue 14: a concurrent writer editing
// lines next to a killed writer's half-finished rewrite).
const lastEditPrefix = "last edit: "

// appendOwn adds tok at the end of w's own file and rewrites its closing
// "last edit" line.
func (w *writer) appendOwn(tok string) error {
	path := filepath.Join(w.dir, ownFile(w.id))
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	text := string(data)
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	body := strings.TrimSuffix(text, "\n")
	if i := strings.LastIndexByte(body, '\n'); strings.HasPrefix(body[i+1:], lastEditPrefix) {
		text = body[:i+1]
	}
	text += fmt.Sprintf("%s\n%s%05d\n", tok, lastEditPrefix, w.seq)
	return os.WriteFile(path, []byte(text), 0o644)
}

// appendLog adds tok at the end of the log file; it reports false when
// the file is not there.
func (w *writer) appendLog(tok string) bool {
	path := filepath.Join(w.dir, logFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	text := string(data)
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return os.WriteFile(path, []byte(text+tok+"\n"), 0o644) == nil
}

// insertShared puts tok at the end of w's section of the shared file; it
// reports false when the file or the section header is not there.
func (w *writer) insertShared(tok string) bool {
	path := filepath.Join(w.dir, sharedFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	lines := strings.SplitAfter(string(data), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	own := sectionHeader(w.id) + "\n"
	at := -1
	for i, l := range lines {
		if l == own {
			at = i + 1
			for at < len(lines) && !strings.HasPrefix(lines[at], "## section ") {
				at++
			}
			break
		}
	}
	if at < 0 {
		return false
	}
	if at == len(lines) && at > 0 && !strings.HasSuffix(lines[at-1], "\n") {
		lines[at-1] += "\n"
	}
	out := strings.Join(lines[:at], "") + tok + "\n" + strings.Join(lines[at:], "")
	return os.WriteFile(path, []byte(out), 0o644) == nil
}

// accepted journals every token written so far as reported OK: a commit
// publishes the whole of L, so everything written before it started is in
// the accepted notebook.
func (w *writer) accepted(gen uint64) error {
	var lines []string
	for s := w.seq - w.pending + 1; s <= w.seq; s++ {
		lines = append(lines, fmt.Sprintf("OK %s-%05d gen=%d", w.tag, s, gen))
	}
	w.pending, w.sharedPending, w.ownPending, w.logPending = 0, 0, 0, 0
	return w.record(lines...)
}

// resolveMarkers resolves every conflict block in the files of L as an
// agent that knows every line here is unique would: the remote side, then
// the local lines found nowhere else in the file. It returns how many
// blocks it resolved. The campaign's edits never overlap, so each block is
// itself worth reporting.
func resolveMarkers(dir string) (int, error) {
	n := 0
	err := eachFile(dir, func(p string, data []byte) error {
		if strings.HasPrefix(filepath.Base(p), engineTemp) {
			return nil
		}
		out, blocks := resolveBlocks(string(data))
		if blocks == 0 {
			return nil
		}
		n += blocks
		return os.WriteFile(p, []byte(out), 0o644)
	})
	return n, err
}

// resolveBlocks is resolveMarkers on one file's text.
func resolveBlocks(text string) (string, int) {
	type block struct{ local, remote []string }
	type segment struct {
		line  string // outside a block
		block *block
	}
	var segs []segment
	var cur *block
	state := 0 // 0 outside, 1 local side, 2 remote side
	for _, l := range strings.SplitAfter(text, "\n") {
		switch strings.TrimRight(l, "\r\n") {
		case "<<<<<<< local":
			if state == 0 {
				state, cur = 1, &block{}
				continue
			}
		case "=======":
			if state == 1 {
				state = 2
				continue
			}
		case ">>>>>>> remote":
			if state == 2 {
				segs = append(segs, segment{block: cur})
				state = 0
				continue
			}
		}
		if l != "" && !strings.HasSuffix(l, "\n") && state != 0 {
			l += "\n" // the side's last line before a marker
		}
		switch state {
		case 0:
			segs = append(segs, segment{line: l})
		case 1:
			cur.local = append(cur.local, l)
		case 2:
			cur.remote = append(cur.remote, l)
		}
	}
	if state != 0 { // an incomplete block is ordinary text
		segs = append(segs, segment{line: "<<<<<<< local\n"})
		for _, l := range cur.local {
			segs = append(segs, segment{line: l})
		}
		if state == 2 {
			segs = append(segs, segment{line: "=======\n"})
			for _, l := range cur.remote {
				segs = append(segs, segment{line: l})
			}
		}
	}
	key := func(l string) string { return strings.TrimRight(l, "\r\n") }
	kept := map[string]bool{} // every line the resolution keeps anyway
	blocks := 0
	for _, sg := range segs {
		if sg.block == nil {
			kept[key(sg.line)] = true
			continue
		}
		blocks++
		for _, l := range sg.block.remote {
			kept[key(l)] = true
		}
	}
	var out strings.Builder
	for _, sg := range segs {
		if sg.block == nil {
			out.WriteString(sg.line)
			continue
		}
		for _, l := range sg.block.remote {
			out.WriteString(l)
		}
		for _, l := range sg.block.local {
			if !kept[key(l)] {
				kept[key(l)] = true
				out.WriteString(l)
			}
		}
	}
	return out.String(), blocks
}
