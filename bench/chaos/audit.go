//go:build unix

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/slivingdoc/slivingdoc/server"
)

// Issue 14's additions to the campaign.
//
// Kills at every failpoint: a fault kind (kill-at-failpoint) arms one
// writer with the next engine failpoint in turn (server.Failpoints); its
// next operation runs the failpoints build of the binary with
// SLIVINGDOC_FAILPOINT set, which SIGKILLs itself exactly there. The arm
// stays until an operation died at it (a pull with nothing to rewrite does
// not reach the rewrite points; after-publish needs a commit, so an armed
// writer commits). The other writers keep appending to their own lines
// meanwhile — the lines the killed writer's rewrite was bringing into its
// directory — which is what turned a half-finished rewrite into a conflict
// before the rewrite record.
//
// Two audits, each must count 0:
//   - published markers: no line of a fresh pull (at both judgements, and
//     every observer pull during the fault phase) starts with "<<<<<<< ",
//     "=======" or ">>>>>>> " (no token or header does);
//   - foreign conflicts: no conflict report (EDIT_FILES) names a file the
//     writer has no unpublished edit in (another writer's own file, or the
//     shared file or its own file with nothing of its own pending). An
//     observer that never edits pulls throughout: any conflict it meets is
//     foreign.

const faultFailpoint faultKind = "kill-at-failpoint"

// failpointBinary builds the failpoints build of slivingdoc into dir.
func failpointBinary(dir string) (string, error) {
	bin := filepath.Join(dir, "slivingdoc-failpoints")
	out, err := exec.Command("go", "build", "-tags", "failpoints", "-o", bin, "github.com/slivingdoc/slivingdoc/cmd/slivingdoc").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("build slivingdoc -tags failpoints: %v\n%s", err, out)
	}
	return bin, nil
}

// armFailpoint makes w's next operations die at point until one does, and
// reports whether one did within wait.
func (c *campaign) armFailpoint(ctx context.Context, w *writer, point string, wait time.Duration) bool {
	w.mu.Lock()
	w.armed, w.armFired = point, false
	w.mu.Unlock()
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		w.mu.Lock()
		fired := w.armFired
		w.mu.Unlock()
		if fired {
			c.st.failpointFired(point)
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	w.mu.Lock()
	w.armed = ""
	fired := w.armFired
	w.mu.Unlock()
	if fired {
		c.st.failpointFired(point)
	}
	return fired
}

// takeArm returns the binary and extra environment of w's next operation.
func (c *campaign) takeArm(w *writer) (bin string, env []string, point string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.dbl != nil && w.dbl.stage < 4 {
		return c.doubleStage(w.dbl)
	}
	if w.armed == "" || c.fpBin == "" {
		return c.cfg.bin, nil, ""
	}
	return c.fpBin, []string{"SLIVINGDOC_FAILPOINT=" + w.armed}, w.armed
}

// armDone records how an armed operation ended.
func (w *writer) armDone(point string, res opResult) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.dbl != nil && w.dbl.stage < 4 {
		w.dbl.advance(point, res)
		return
	}
	if point == "" || res.Outcome != outKilled {
		return
	}
	if w.armed == point {
		w.armed, w.armFired = "", true
	}
}

// markerLine reports whether l is (the start of) a conflict marker line.
func markerLine(l string) bool {
	return strings.HasPrefix(l, "<<<<<<< ") || strings.HasPrefix(l, ">>>>>>> ") || strings.HasPrefix(l, "=======")
}

// auditMarkers counts the marker lines in the files of a directory that
// holds only what was published.
func auditMarkers(dir string) (int, []string) {
	n := 0
	var where []string
	_ = eachFile(dir, func(p string, data []byte) error {
		if strings.HasPrefix(filepath.Base(p), engineTemp) {
			return nil
		}
		for i, l := range strings.Split(string(data), "\n") {
			if markerLine(l) {
				n++
				if len(where) < 5 {
					rel, _ := filepath.Rel(dir, p)
					where = append(where, fmt.Sprintf("%s:%d %q", rel, i+1, l))
				}
			}
		}
		return nil
	})
	return n, where
}

// auditConflict checks a conflict report of w against what w edited: the
// file must hold an unpublished edit of w, and every conflict block in it
// must hold a line of w (a block of other writers' lines only, in the
// shared file, is text w did not edit). It reports whether one was foreign.
func (c *campaign) auditConflict(w *writer, res opResult) bool {
	found := false
	for _, f := range res.Report.Files {
		foreign := false
		switch {
		case f == sharedFile:
			foreign = w.sharedPending == 0
		case f == ownFile(w.id):
			foreign = w.ownPending == 0
		case f == logFile:
			foreign = w.logPending == 0
		default:
			foreign = true
		}
		if !foreign {
			if data, err := os.ReadFile(filepath.Join(w.dir, f)); err == nil {
				foreign = blockWithout(string(data), w.tag)
			}
		}
		if foreign {
			found = true
			c.st.foreignConflict(fmt.Sprintf("writer %d %s: conflict in %s, which it did not edit (%s·%s)", w.id, res.Op, f, res.Report.Code, res.Report.Reason))
		}
	}
	return found
}

// blockWithout reports whether text holds a conflict block none of whose
// lines starts with tag.
func blockWithout(text, tag string) bool {
	in, mine := false, false
	for _, l := range strings.Split(text, "\n") {
		switch strings.TrimSuffix(l, "\r") {
		case "<<<<<<< local":
			in, mine = true, false
		case ">>>>>>> remote":
			if in && !mine {
				return true
			}
			in = false
		default:
			if in && strings.HasPrefix(l, tag) {
				mine = true
			}
		}
	}
	return false
}

// observe pulls into a directory that never edits, every interval, until
// ctx ends: what it receives is exactly what was published.
func (c *campaign) observe(ctx context.Context, interval time.Duration) {
	o := &writer{id: -3, dir: filepath.Join(c.work, "observer"), priv: filepath.Join(c.work, "observer-priv"), started: make(chan struct{}, 1)}
	for _, d := range []string{o.dir, o.priv} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			c.st.fail("observer: %v", err)
			return
		}
	}
	for ctx.Err() == nil {
		res := runProc(c.cfg.bin, o.dir, c.procEnv(o.priv), c.cfg.opBound, func(*proc) {}, "pull")
		switch {
		case res.Outcome == outOK:
			n, where := auditMarkers(o.dir)
			c.st.observed(n, where)
		case res.Outcome == outDomain && res.Report.Action == "EDIT_FILES":
			c.st.foreignConflict(fmt.Sprintf("the observer, which never edits, got %s·%s on pull", res.Report.Code, res.Report.Reason))
			_, _ = resolveMarkers(o.dir)
		}
		select {
		case <-ctx.Done():
		case <-time.After(interval):
		}
	}
}

// failpointsInTurn is the order kill-at-failpoint events take.
var failpointsInTurn = server.Failpoints
