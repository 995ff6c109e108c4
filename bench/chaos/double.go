//go:build unix

package main

import (
	"context"
	"fmt"
	"time"

	"github.com/slivingdoc/slivingdoc/server"
)

// Double crashes (issue 37): one writer killed twice in a row, then left
// to commit in peace. A single kill is followed by an operation that
// recovers from it; what the recovery itself leaves behind, when it is
// cut short in turn, only a second kill in a row reaches. That is where
// the records of L and P disagreed about which version a file held, and a
// later commit duplicated another writer's lines.
//
// The kill-twice fault arms a writer with a pair of rewrite failpoints:
//
//	stage 1  its next commits run the failpoints build and die at the
//	         first point (a commit that has nothing to rewrite does not
//	         reach it; the arm waits for one that does);
//	stage 2  the very next operation, a commit with a fresh edit, dies at
//	         the second point; if it ends any other way the pair starts
//	         over at stage 1, since the two kills were not in a row;
//	stage 3  the next operation is a plain commit with the ordinary
//	         binary: the one that must neither lose nor duplicate a line.
//
// Meanwhile the other writers keep publishing. After each kill the writer
// waits until another writer's commit with a line of the log file was
// accepted (at most doublePause), so the operation after the kill has
// another writer's appended line to bring into its directory, as in the
// issue's report: the duplicate needs a publication between the second
// kill and the plain commit. The writer in a kill-twice appends to the log
// file too. The campaign's own
// audits then judge the result: every token exactly once in a fresh pull,
// no marker line published, no conflict in a file the writer did not
// edit, verify clean. The fault fired when all three stages ran.

const faultDouble faultKind = "kill-twice"

// rewritePoints are the failpoints inside a rewrite of L (after-publish
// is not: the store has the publication and L is untouched).
var rewritePoints = []string{server.FailMidRewrite, server.FailAfterRewrite, server.FailAfterBaseline, server.FailAfterRecoveryFlag, server.FailAfterRewriteRecord}

// doublesInTurn is the order kill-twice events take the pairs in: every
// ordered pair of rewrite points, starting with a commit killed
// mid-rewrite twice.
var doublesInTurn = func() [][2]string {
	var pairs [][2]string
	for _, a := range rewritePoints {
		for _, b := range rewritePoints {
			pairs = append(pairs, [2]string{a, b})
		}
	}
	return pairs
}()

// doubleKill is a writer's kill-twice in progress (writer.dbl).
type doubleKill struct {
	first, second string
	stage         int // 1, 2, 3 as above; 4 when the plain commit ended
	restarts      int // times stage 2 did not die and the pair started over
	paused        int // the stage whose pause was taken
	pauses        int // pauses that saw another writer's log line accepted
	plain         opResult
}

// doublePause bounds the wait for another writer's log line after a kill.
const doublePause = 15 * time.Second

// pauseAfterKill is called by w's loop before each operation: right after
// a kill of a kill-twice (stage 2 or 3 not paused yet), it waits until
// another writer's commit holding a log line was accepted.
func (c *campaign) pauseAfterKill(ctx context.Context, w *writer) {
	w.mu.Lock()
	d := w.dbl
	if d == nil || d.stage < 2 || d.stage > 3 || d.paused == d.stage {
		w.mu.Unlock()
		return
	}
	d.paused = d.stage
	w.mu.Unlock()
	mark := c.logCommits.Load()
	deadline := time.Now().Add(doublePause)
	for ctx.Err() == nil && time.Now().Before(deadline) {
		if c.logCommits.Load() > mark {
			w.mu.Lock()
			d.pauses++
			w.mu.Unlock()
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// doubleStage returns the binary, extra environment and failpoint of the
// next operation of a writer with a kill-twice in progress.
func (c *campaign) doubleStage(d *doubleKill) (bin string, env []string, point string) {
	switch d.stage {
	case 1:
		return c.fpBin, []string{"SLIVINGDOC_FAILPOINT=" + d.first}, d.first
	case 2:
		return c.fpBin, []string{"SLIVINGDOC_FAILPOINT=" + d.second}, d.second
	}
	return c.cfg.bin, nil, ""
}

// advance moves d on after an operation that ran with failpoint point
// ended as res.
func (d *doubleKill) advance(point string, res opResult) {
	killed := point != "" && res.Outcome == outKilled
	switch d.stage {
	case 1:
		if killed {
			d.stage = 2
		}
	case 2:
		if killed {
			d.stage = 3
		} else {
			d.stage = 1
			d.restarts++
		}
	case 3:
		d.plain = res
		d.stage = 4
	}
}

// armDouble runs one kill-twice on w with the pair of failpoints, and
// reports whether all three stages ran. The two kills must happen within
// wait (the pause after the first counts); the plain commit that follows,
// and the pause before it, are then always waited for (both are bounded),
// so no other fault lands on them.
func (c *campaign) armDouble(ctx context.Context, w *writer, pair [2]string, wait time.Duration) bool {
	d := &doubleKill{first: pair[0], second: pair[1], stage: 1}
	w.mu.Lock()
	w.dbl = d
	w.mu.Unlock()
	deadline := time.Now().Add(wait)
	for ctx.Err() == nil {
		w.mu.Lock()
		stage := d.stage
		if stage < 3 && time.Now().After(deadline) {
			w.dbl = nil
			w.mu.Unlock()
			c.st.doubleMissed(pair, stage, d.restarts)
			return false
		}
		w.mu.Unlock()
		if stage == 4 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	w.mu.Lock()
	done := d.stage == 4
	w.dbl = nil
	w.mu.Unlock()
	if done {
		c.st.doubleFired(pair, d.restarts, d.pauses, d.plain)
	}
	return done
}

// doubleKey names a pair in the figures.
func doubleKey(pair [2]string) string { return fmt.Sprintf("%s+%s", pair[0], pair[1]) }
