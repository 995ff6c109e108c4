package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/slivingdoc/slivingdoc/bench"
)

// actor is one writer of contention or one agent: its own notebook
// directory and private root, adding tagged lines to its own file, to the
// end of a shared file, or to its own section of a shared file, committing
// until each commit is accepted.
type actor struct {
	tag     string // "w007", "a042"
	nb      *notebook
	file    string // slash path it writes
	shared  bool   // file is shared: append at its end ...
	section bool   // ... or, if set, insert into the "## <tag>" section
	payload int    // untagged bytes after each tagged line (~1 KB agents)
	seq     int

	pending  []string // tagged lines not yet accepted
	accepted []string
	written  []string

	ok        int
	busy      int // REMOTE_BUSY results
	conflicts int // CONTENT_CONFLICT results (resolved by keeping both sides)
	other     map[string]int
	commits   []Sample // accepted commit processes
	attempts  []Sample // every commit process
}

func newActor(tag string, nb *notebook, file string, shared bool, payload int) *actor {
	return &actor{tag: tag, nb: nb, file: file, shared: shared, payload: payload, other: map[string]int{}}
}

// sectionHeader is the line that opens an actor's section of a shared file.
func sectionHeader(tag string) string { return "## " + tag }

// sharedFile is the initial shared file: one section per tag, each a header
// and a blank line, so that insertions of different sections are always
// separated by unchanged lines and merge cleanly.
func sharedFile(tags []string) []byte {
	var b strings.Builder
	for _, t := range tags {
		b.WriteString(sectionHeader(t) + "\n\n")
	}
	return []byte(b.String())
}

// edit adds the next tagged line (and payload) to the actor's file.
func (a *actor) edit() error {
	line := fmt.Sprintf("%s-c%03d %s", a.tag, a.seq, strings.TrimSpace(string(bench.NoteText(a.seq*1000+len(a.tag), 48))))
	line = strings.ReplaceAll(line, "\n", " ")
	block := line + "\n"
	if a.payload > 0 {
		block += string(bench.NoteText(len(a.written)*131+a.seq, a.payload))
	}
	a.seq++
	path := filepath.Join(a.nb.dir, filepath.FromSlash(a.file))
	if !a.shared || !a.section {
		if err := appendTo(path, []byte(block)); err != nil {
			return err
		}
	} else {
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out, err := insertInSection(string(data), a.tag, block)
		if err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			return err
		}
	}
	a.pending = append(a.pending, line)
	a.written = append(a.written, line)
	return nil
}

// insertInSection inserts block at the end of tag's section (before the
// blank line that closes it).
func insertInSection(text, tag, block string) (string, error) {
	lines := strings.SplitAfter(text, "\n")
	for i, l := range lines {
		if strings.TrimRight(l, "\r\n") != sectionHeader(tag) {
			continue
		}
		j := i + 1
		for j < len(lines) && strings.TrimRight(lines[j], "\r\n") != "" {
			j++
		}
		return strings.Join(lines[:j], "") + block + strings.Join(lines[j:], ""), nil
	}
	return "", fmt.Errorf("section %s not found in the shared file", tag)
}

// resolveKeepBoth removes the conflict markers of the actor's file, keeping
// both sides: the actor's own lines and the concurrent ones.
func (a *actor) resolveKeepBoth() error {
	path := filepath.Join(a.nb.dir, filepath.FromSlash(a.file))
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var out []string
	for _, l := range strings.SplitAfter(string(data), "\n") {
		switch strings.TrimRight(l, "\r\n") {
		case "<<<<<<< local", "=======", ">>>>>>> remote":
			continue
		}
		out = append(out, l)
	}
	return os.WriteFile(path, []byte(strings.Join(out, "")), 0o644)
}

// errGaveUp: an actor stopped retrying one commit.
var errGaveUp = errors.New("gave up")

// errStopped: the run's time cap passed before the actor's next try.
var errStopped = errors.New("stopped at the time cap")

// commit commits until accepted: REMOTE_BUSY is retried, a conflict is
// resolved (keeping both sides) and committed again, up to maxTries
// processes for this commit. No new process starts once stop is done, but
// one that runs is waited for and counted: a commit the store accepted is
// always known to the audit.
func (a *actor) commit(ctx, stop context.Context, maxTries int) error {
	for try := 1; ; try++ {
		if stop.Err() != nil {
			return fmt.Errorf("%s: %w", a.tag, errStopped)
		}
		o, err := a.nb.commit(ctx, a.tag+" note")
		if err != nil {
			return err
		}
		a.attempts = append(a.attempts, o.Sample)
		switch o.Code {
		case "":
			a.ok++
			a.commits = append(a.commits, o.Sample)
			a.accepted = append(a.accepted, a.pending...)
			a.pending = nil
			return nil
		case "REMOTE_BUSY":
			a.busy++
		case "CONTENT_CONFLICT":
			a.conflicts++
			if err := a.resolveKeepBoth(); err != nil {
				return err
			}
		default:
			a.other[o.Code+" · "+o.Reason]++
		}
		if try >= maxTries {
			return fmt.Errorf("%s: %w after %d tries", a.tag, errGaveUp, try)
		}
	}
}

// unfinishedSummary groups the actors that stopped early by reason.
func unfinishedSummary(errs []error, actors []*actor) ([]string, error) {
	var stopped, gaveUp []string
	for i, err := range errs {
		switch {
		case err == nil:
		case errors.Is(err, errStopped):
			stopped = append(stopped, actors[i].tag)
		case errors.Is(err, errGaveUp):
			gaveUp = append(gaveUp, actors[i].tag)
		default:
			return nil, fmt.Errorf("%s: %w", actors[i].tag, err)
		}
	}
	var out []string
	if len(stopped) > 0 {
		out = append(out, fmt.Sprintf("%d stopped at the time cap before finishing (%s)", len(stopped), abbreviate(stopped)))
	}
	if len(gaveUp) > 0 {
		out = append(out, fmt.Sprintf("%d gave up a commit after %d tries (%s)", len(gaveUp), maxTriesPerCommit, abbreviate(gaveUp)))
	}
	return out, nil
}

func abbreviate(tags []string) string {
	if len(tags) <= 6 {
		return strings.Join(tags, ", ")
	}
	return strings.Join(tags[:6], ", ") + fmt.Sprintf(", … %d more", len(tags)-6)
}

// actorTotals adds up a group of actors.
type actorTotals struct {
	OK, Busy, Conflicts int
	Other               map[string]int
	Commits             OpStats       // accepted commit processes
	Processes           int           // every commit process
	CPU                 time.Duration // of every commit process
	accepted, written   []string
}

func totals(actors []*actor) actorTotals {
	t := actorTotals{Other: map[string]int{}}
	var commits []Sample
	for _, a := range actors {
		t.OK += a.ok
		t.Busy += a.busy
		t.Conflicts += a.conflicts
		for k, v := range a.other {
			t.Other[k] += v
		}
		commits = append(commits, a.commits...)
		t.Processes += len(a.attempts)
		for _, s := range a.attempts {
			t.CPU += s.CPU
		}
		t.accepted = append(t.accepted, a.accepted...)
		t.written = append(t.written, a.written...)
	}
	t.Commits = opStats(commits)
	return t
}
