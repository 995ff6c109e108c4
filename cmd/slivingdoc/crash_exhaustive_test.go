//go:build unix

package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/crashpoint"
	"github.com/slivingdoc/slivingdoc/server/workdir"
)

// TestCrashExhaustive kills writer A at every crash point (internal/
// crashpoint: every durable file-system effect in L and P and every store
// write) of every operation of every short sequence, once or twice in a
// row, and audits the notebook after recovery.
//
// The notebook (file store) has three files and one that comes and goes:
// log.md, a shared log both writers append to; a.md, which only A edits,
// by replacing line k at its k-th commit; b/b.md, which only B edits, by
// replacing line j at its j-th commit, next to the line its previous
// commit changed (the line A's rewrites bring in); and b/note.md, which B
// creates at its odd commits and removes at its even ones (so A's
// rewrites remove files too). Before the sequence A publishes generation
// 1 (log.md, a.md, b/b.md) and generation 2 (a.md line 9).
//
// A sequence is 1 to 3 operations of A, each preceded by a commit of B:
// pull; commit (after appending "A opK line1" to log.md and replacing line
// K of a.md); restore (a.md as of generation 1); revert (generation 2).
// After it B commits once more, A makes a plain commit (with its edits,
// never killed) and B pulls. A case is a sequence and its crashes: one
// crash in op i at point p (every p the crash-free op reaches), or that
// and a second one in op i+1 at point q (every q that op i+1 reaches after
// the first crash). An operation after a crash that answers
// RECOVERY_FAILURE is run once more.
//
// The oracle is the same sequence run without crashes (the reference),
// itself checked against what was written: in B's final directory,
// log.md holds every line either writer appended exactly once (compared
// as a multiset: a commit cut short publishes its lines later, so their
// order may differ); a.md, b/b.md and b/note.md are exactly the
// reference's; A's directory equals B's (no local edit left behind);
// `verify` is clean. One tolerance: a restore or revert that was killed
// (or refused) may have taken effect or not, so a.md may also equal the
// reference run without that operation (and nothing else).
//
// A crash point is named by its key (crashpoint.Key and occurrence, e.g.
// "workdir.rename|log.md#1"), not its number: a commit overlaps its pack
// upload with the write of its pending record, so their numbers swap
// from run to run while the key names the same effect. A point right
// after an effect a process crash cannot observe (a directory fsync, the
// staging of temporary files) is skipped as a duplicate of the point
// before it: both leave the same files. Points of state are those before
// an effect on L, on P's records (baseline, recovery flag, rewrite and
// pending records) or on the store; the others write caches.
//
// Scope and bound (the default, run by make test and make
// crash-exhaustive): every sequence of 1 to 3 ops (84). Sequences of one
// op: a crash at every point. Of two: a crash at every point of op 2, and
// a crash at every point of state of op 1 inside its record window (see
// recordWindow), alone and followed by a crash at every point of state of
// op 2 (double crashes). Of three: a crash at
// every point of state of op 3 (the first two ops run without a crash:
// their crashes are the shorter sequences' cases). With -short: the
// sequences of one op, and commit,commit with crashes in the rewrite of
// L only. With SLIVINGDOC_CRASH_SCOPE=full: in every sequence, every
// point of every op, alone and followed by every point of the next op
// (hours). The test logs the number of cases it checked, and, in a run of
// every sequence of its scope, fails if a registered crash point label
// was never reached.
//
// Replay one case with the command printed on failure, e.g.
//
//	go test -count=1 -run 'TestCrashExhaustive/^seq=commit,commit$/^crash=1:workdir\.rename\|log\.md#1$/^then=2:osfile\.fsync-dir\|\.#1$' ./cmd/slivingdoc/
func TestCrashExhaustive(t *testing.T) {
	bin := cliFailpointBinary(t)
	scope := crashScopeCI
	switch {
	case os.Getenv("SLIVINGDOC_CRASH_SCOPE") == "full":
		scope = crashScopeFull
	case testing.Short():
		scope = crashScopeShort
	}
	maxLen := 3
	var seqs [][]string
	var gen func(prefix []string)
	gen = func(prefix []string) {
		if len(prefix) > 0 && (scope != crashScopeShort || len(prefix) == 1 || slices.Equal(prefix, []string{"commit", "commit"})) {
			seqs = append(seqs, slices.Clone(prefix))
		}
		if len(prefix) == maxLen {
			return
		}
		for _, op := range crashOps4 {
			gen(append(prefix, op))
		}
	}
	gen(nil)

	st := &crashStats{reached: map[string]bool{}}
	t.Cleanup(func() {
		t.Logf("crash sequences checked: %d (%d with one crash, %d with two), %d crash points skipped as duplicates, %d operation sequences", st.single+st.double, st.single, st.double, st.skipped, st.seqs)
		if st.missed > 0 {
			t.Logf("%d cases skipped: their op took another path and never reached the crash point named", st.missed)
		}
		if st.seqs == len(seqs) {
			var missing []string
			for _, l := range crashpoint.Labels() {
				if !st.reached[l] {
					missing = append(missing, l)
				}
			}
			if len(missing) > 0 {
				t.Errorf("crash point labels never reached by any sequence (add a scenario that reaches them): %s", strings.Join(missing, ", "))
			}
		}
	})
	// Sequences run on workers of their own rather than as parallel
	// subtests: the work is child processes that wait on fsyncs as much
	// as they compute, so four times as many as there are CPUs keep them busy,
	// whatever -parallel says.
	work := make(chan []string)
	var wg sync.WaitGroup
	for range 4 * runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := range work {
				t.Run("seq="+strings.Join(seq, ","), func(t *testing.T) {
					st.addSeq()
					runCrashSequence(t, bin, seq, st, scope)
				})
			}
		}()
	}
	for _, seq := range seqs {
		work <- seq
	}
	close(work)
	wg.Wait()
}

// crashScope is how much of the space a run covers (see TestCrashExhaustive).
type crashScope int

const (
	crashScopeCI crashScope = iota
	crashScopeShort
	crashScopeFull
)

var crashOps4 = []string{"pull", "commit", "restore", "revert"}

type crashStats struct {
	mu                                    sync.Mutex
	seqs, single, double, skipped, missed int
	reached                               map[string]bool
}

// addMissed counts a case whose crash point the run did not reach.
func (s *crashStats) addMissed() { s.mu.Lock(); s.missed++; s.mu.Unlock() }

func (s *crashStats) addSeq() { s.mu.Lock(); s.seqs++; s.mu.Unlock() }

// addCase counts a case run (crashes: 1 or 2).
func (s *crashStats) addCase(crashes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if crashes == 2 {
		s.double++
	} else {
		s.single++
	}
}

// addPoints records the labels of a trace and the points skipped in it.
func (s *crashStats) addPoints(trace []tracePoint, skipped int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.skipped += skipped
	for _, p := range trace {
		s.reached[p.label] = true
	}
}

// tracePoint is one line of a crash trace: its number, its key
// (crashpoint.Key and occurrence, "label|shape#k": the same effect on
// every run) and its detail.
type tracePoint struct {
	n                  int
	key, label, detail string
}

// noEffect lists the labels whose effect a process crash cannot observe:
// a crash just after one leaves the same files as a crash just before it.
var noEffect = map[string]bool{"osfile.fsync-dir": true, "workdir.stage": true}

// crashPoints returns the points of a crash-free run of an op worth
// crashing at, and how many were skipped as duplicates.
func crashPoints(trace []tracePoint) (points []tracePoint, skipped int) {
	for i, p := range trace {
		if i > 0 && noEffect[trace[i-1].label] {
			skipped++
			continue
		}
		points = append(points, p)
	}
	return points, skipped
}

// crashWorld is one sequence's notebook: the store and both writers'
// directories under one root, so that a state is one directory tree that
// can be snapshotted and put back at the same absolute path (private
// records are keyed by paths).
type crashWorld struct {
	t     *testing.T
	bin   string
	root  string // the live state
	snaps string // snapshots, one directory each
	seq   []string
	env   map[string][]string   // "a", "b"
	nodes map[string]caseResult // snapshots taken: the result so far
	refs  map[int]caseResult    // crash-free runs, by mask of skipped ops
	tmp   string
	st    *crashStats
}

// crashCase is what to do: which ops crash where and which
// ops are skipped (reference variants).
type crashCase struct {
	crash []string // per op: the key of the point to crash at ("": none)
	skip  int      // bit i: op i is not run
}

func (c crashCase) key(upto int) string {
	var b strings.Builder
	for i := 0; i < upto; i++ {
		fmt.Fprintf(&b, "%s.", c.crash[i])
		if c.skip&(1<<i) != 0 {
			b.WriteString("s")
		}
		b.WriteByte('/')
	}
	return b.String()
}

// caseResult is what a run of a case produced.
type caseResult struct {
	files     map[string]string // B's directory after its final pull
	aFiles    map[string]string // A's directory after its final commit
	traces    [][]tracePoint    // per op: the points reached
	killed    []tracePoint      // per op: the point it was killed at (n == 0: not killed)
	mayDiffer int               // bit i: op i is a restore/revert that was killed or refused
	story     []string          // what happened, for a failure message
	problems  []string          // steps that failed where they must not
	missed    []string          // crash points the run did not reach
}

func runCrashSequence(t *testing.T, bin string, seq []string, st *crashStats, scope crashScope) {
	base := t.TempDir()
	w := &crashWorld{t: t, bin: bin, root: filepath.Join(base, "w"), snaps: filepath.Join(base, "snaps"), seq: seq,
		nodes: map[string]caseResult{}, refs: map[int]caseResult{}, tmp: filepath.Join(base, "tmp"), st: st}
	for _, d := range []string{w.root, w.snaps, w.tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	w.env = map[string][]string{}
	for _, who := range []string{"a", "b"} {
		d := filepath.Join(w.root, who)
		w.env[who] = append(cleanEnv(), "SLIVINGDOC_STORE=file://"+filepath.ToSlash(filepath.Join(w.root, "store")),
			"SLIVINGDOC_PRIVATE_ROOT="+filepath.Join(d, "private"), "XDG_DATA_HOME="+filepath.Join(d, "xdg-data"), "XDG_CACHE_HOME="+filepath.Join(d, "xdg-cache"),
			"XDG_STATE_HOME="+filepath.Join(d, "xdg-state"), "HOME="+filepath.Join(d, "home"))
	}
	w.setup()

	n := len(seq)
	ref := w.reference(0)
	if len(ref.problems) > 0 {
		t.Fatalf("the crash-free run of %v failed:\n%s", seq, strings.Join(append(ref.story, ref.problems...), "\n"))
	}
	if msg := w.checkWritten(ref); msg != "" {
		t.Fatalf("the crash-free run of %v does not hold what was written:\n%s\n%s", seq, msg, strings.Join(ref.story, "\n"))
	}
	for i := range n {
		points, skipped := crashPoints(ref.traces[i])
		st.addPoints(ref.traces[i], skipped)
		// Which crashes in op i the scope runs (see TestCrashExhaustive).
		full := scope == crashScopeFull
		parent := full || (n == 2 && i == 0) // its crashes are followed by crashes in op 2
		switch {
		case scope == crashScopeShort && n == 2:
			points = rewritePoints(points)
		case full || (i == n-1 && n < 3):
		case i == n-1:
			points = statePoints(points)
		case parent:
			points = recordWindow(ref.traces[i], statePoints(points))
		default:
			points = nil
		}
		for _, p := range points {
			c := crashCase{crash: make([]string, n)}
			c.crash[i] = p.key
			t.Run(fmt.Sprintf("crash=%d:%s", i+1, p.key), func(t *testing.T) {
				defer w.use(t)()
				res := w.run(c)
				st.addCase(1)
				// Audited last: a failure reported as a skip ends the subtest.
				defer w.audit(t, c, res)
				if !parent || i+1 >= n || len(res.traces) <= i+1 {
					return
				}
				qs, skipped := crashPoints(res.traces[i+1])
				st.addPoints(res.traces[i+1], skipped)
				switch scope {
				case crashScopeShort:
					qs = rewritePoints(qs)
				case crashScopeCI:
					qs = statePoints(qs)
				}
				for _, q := range qs {
					c2 := crashCase{crash: slices.Clone(c.crash)}
					c2.crash[i+1] = q.key
					t.Run(fmt.Sprintf("then=%d:%s", i+2, q.key), func(t *testing.T) {
						defer w.use(t)()
						res := w.run(c2)
						st.addCase(2)
						w.audit(t, c2, res)
					})
				}
			})
		}
	}
}

// recordWindow keeps, of points (of trace), those where the op has left
// work for the next call: after its first write of a record of P (pending
// record, next baseline, recovery flag, rewrite record) and before its
// last removal of one. A crash before that window leaves the op as if not
// begun but for caches, and one after it the op done: the next op then
// starts from a state a crash in it alone already covers, so the double
// crashes start inside the window.
func recordWindow(trace []tracePoint, points []tracePoint) []tracePoint {
	first, last := -1, len(trace)
	for i, p := range trace {
		if first < 0 && p.label == "osfile.rename" && strings.Contains(p.detail, "/private/dirs/") && filepath.Base(p.detail) != "statcache" {
			first = i
		}
		if p.label == "state.remove" {
			last = i
		}
	}
	if first < 0 {
		return nil
	}
	var out []tracePoint
	for _, p := range points {
		if i := p.n - 1; i > first && i <= last {
			out = append(out, p)
		}
	}
	return out
}

// rewritePoints keeps, of points, those of the rewrite of L: before a
// file is replaced, and before L's directory is fsynced (the rewrite done).
func rewritePoints(points []tracePoint) []tracePoint {
	var out []tracePoint
	for _, p := range points {
		if p.label == "workdir.rename" || p.label == "osfile.fsync-dir" && strings.Contains(p.detail, "/notes/") {
			out = append(out, p)
		}
	}
	return out
}

// statePoints keeps, of points (numbers in trace), those before an effect
// on what the engine records or publishes: L's files, the records of P
// (baseline, recovery flag, rewrite and pending records) and the store;
// not those before a cache write (packs, indexes, the stat cache, the
// turns cache), whose loss or staleness costs a download or a read.
func statePoints(points []tracePoint) []tracePoint {
	var out []tracePoint
	for _, p := range points {
		if strings.HasPrefix(p.label, "osfile.") || p.label == "cas.index" {
			if strings.Contains(p.detail, "/stores/") || strings.Contains(p.detail, "/xdg-cache/") || filepath.Base(p.detail) == "statcache" {
				continue
			}
		}
		out = append(out, p)
	}
	return out
}

// use makes t the test the world reports to (its cases run one after
// the other, each a subtest) and returns the function that puts the
// previous one back.
func (w *crashWorld) use(t *testing.T) func() {
	prev := w.t
	w.t = t
	return func() { w.t = prev }
}

// replayName is the -run pattern of a case.
func (w *crashWorld) replayName(c crashCase) string {
	s := "TestCrashExhaustive/^seq=" + strings.Join(w.seq, ",") + "$"
	first := true
	for i, p := range c.crash {
		if p == "" {
			continue
		}
		if first {
			s += "/^" + regexp.QuoteMeta(fmt.Sprintf("crash=%d:%s", i+1, p)) + "$"
			first = false
		} else {
			s += "/^" + regexp.QuoteMeta(fmt.Sprintf("then=%d:%s", i+1, p)) + "$"
		}
	}
	return s
}

func (w *crashWorld) reference(skip int) caseResult {
	if r, ok := w.refs[skip]; ok {
		return r
	}
	r := w.run(crashCase{crash: make([]string, len(w.seq)), skip: skip})
	w.refs[skip] = r
	return r
}

// setup publishes generations 1 and 2 (A) and has B pull, then
// snapshots the state as "setup".
func (w *crashWorld) setup() {
	t := w.t
	if o := w.exec("a", nil, "pull", w.dir("a")); o.code != 0 {
		t.Fatalf("setup: %s", o)
	}
	w.write("a", "log.md", "# log\n")
	w.write("a", "a.md", numbered("a", 10))
	w.write("a", "b/b.md", numbered("b", 8))
	if o := w.exec("a", nil, "commit", w.dir("a"), "-m", "base"); o.code != 0 {
		t.Fatalf("setup: %s", o)
	}
	w.write("a", "a.md", replaceLine(w.read("a", "a.md"), 9, "A setup line9"))
	if o := w.exec("a", nil, "commit", w.dir("a"), "-m", "line 9"); o.code != 0 {
		t.Fatalf("setup: %s", o)
	}
	if o := w.exec("b", nil, "pull", w.dir("b")); o.code != 0 {
		t.Fatalf("setup: %s", o)
	}
	w.snapshot("setup")
}

func numbered(prefix string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%s%d\n", prefix, i)
	}
	return b.String()
}

// replaceLine replaces line k (1-based) of s, if it has one.
func replaceLine(s string, k int, with string) string {
	lines := strings.SplitAfter(s, "\n")
	if k-1 < len(lines) && lines[k-1] != "" {
		lines[k-1] = with + "\n"
	}
	return strings.Join(lines, "")
}

func (w *crashWorld) dir(who string) string { return filepath.Join(w.root, who, "notes") }

func (w *crashWorld) write(who, rel, content string) {
	p := filepath.Join(w.dir(who), filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

func (w *crashWorld) read(who, rel string) string {
	b, err := os.ReadFile(filepath.Join(w.dir(who), filepath.FromSlash(rel)))
	if err != nil && !os.IsNotExist(err) {
		w.t.Fatal(err)
	}
	return string(b)
}

// files is a writer's directory, without the temporary files a killed
// rewrite may leave (the scan skips them).
func (w *crashWorld) files(who string) map[string]string {
	m := readTree(w.t, w.dir(who))
	for p := range m {
		if strings.HasPrefix(filepath.Base(p), workdir.TempPrefix) {
			delete(m, p)
		}
	}
	return m
}

func (w *crashWorld) exec(who string, extra []string, args ...string) outcome {
	cmd := exec.Command(w.bin, args...)
	cmd.Env = append(slices.Clone(w.env[who]), extra...)
	cmd.Dir = w.root
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	o := outcome{args: args, stdout: out.String(), stderr: errb.String()}
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			w.t.Fatalf("running %v: %v", args, err)
		}
		o.code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			o.signal = ws.Signal()
		}
	}
	return o
}

// snapshot copies the live state to snapshot name; restore puts it back.
func (w *crashWorld) snapshot(name string) {
	dst := filepath.Join(w.snaps, name)
	if err := os.RemoveAll(dst); err != nil {
		w.t.Fatal(err)
	}
	if err := copyWorld(w.root, dst); err != nil {
		w.t.Fatalf("snapshot: %v", err)
	}
}

func (w *crashWorld) restore(name string) {
	if err := os.RemoveAll(w.root); err != nil {
		w.t.Fatal(err)
	}
	if err := copyWorld(filepath.Join(w.snaps, name), w.root); err != nil {
		w.t.Fatalf("restore: %v", err)
	}
}

// copyWorld copies directory src to dst (which must not exist) with the
// files' modes and modification times; the engine's stat cache sees new
// inodes and change times, so it re-reads the files, as it must.
func copyWorld(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(to, info.Mode().Perm()|0o700)
		case info.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if err := os.WriteFile(to, data, info.Mode().Perm()); err != nil {
				return err
			}
			return os.Chtimes(to, info.ModTime(), info.ModTime())
		}
		return nil // sockets, links: nothing of the state
	})
}

// bCommit is B's j-th commit: a line appended to the log, line j of
// b/b.md replaced, b/note.md created (odd j) or removed (even j).
func (w *crashWorld) bCommit(j int, r *caseResult) {
	w.write("b", "log.md", w.read("b", "log.md")+fmt.Sprintf("B %d line1\n", j))
	w.write("b", "b/b.md", replaceLine(w.read("b", "b/b.md"), j, fmt.Sprintf("B %d b.md", j)))
	if j%2 == 1 {
		w.write("b", "b/note.md", fmt.Sprintf("B %d note\n", j))
	} else if err := os.Remove(filepath.Join(w.dir("b"), "b", "note.md")); err != nil {
		w.t.Fatal(err)
	}
	o := w.exec("b", nil, "commit", w.dir("b"), "-m", fmt.Sprintf("b%d", j))
	r.story = append(r.story, fmt.Sprintf("B commit %d: exit %d", j, o.code))
	if o.code != 0 {
		r.problems = append(r.problems, fmt.Sprintf("B's commit %d failed:\n%s", j, o))
	}
}

// aEdit is A's edit before its k-th op (a commit): a line appended to
// the log, line k of a.md replaced.
func (w *crashWorld) aEdit(k int) {
	w.write("a", "log.md", w.read("a", "log.md")+fmt.Sprintf("A op%d line1\n", k))
	w.write("a", "a.md", replaceLine(w.read("a", "a.md"), k, fmt.Sprintf("A op%d a.md", k)))
}

// aOp runs A's op k (1-based) of kind op, killed at point crash (0:
// never), and records what happened.
func (w *crashWorld) aOp(k int, op string, crash string, r *caseResult) {
	var args []string
	switch op {
	case "pull":
		args = []string{"pull", w.dir("a")}
	case "commit":
		w.aEdit(k)
		args = []string{"commit", w.dir("a"), "-m", fmt.Sprintf("a%d", k)}
	case "restore":
		args = []string{"restore", w.dir("a"), "--generation", "1", "a.md"}
	case "revert":
		args = []string{"revert", w.dir("a"), "2"}
	}
	trace := filepath.Join(w.tmp, "trace")
	os.Remove(trace)
	extra := []string{"SLIVINGDOC_CRASH_TRACE=" + trace}
	if crash != "" {
		extra = append(extra, "SLIVINGDOC_CRASH_AT="+crash)
	}
	o := w.exec("a", extra, args...)
	points := readTrace(w.t, trace)
	r.traces = append(r.traces, points)
	var killed tracePoint
	if crash != "" && o.signal != syscall.SIGKILL {
		// The op took another path than when its points were listed (a
		// store write that depends on the time, say): the case is not the
		// one named, so it is counted apart, not failed.
		r.missed = append(r.missed, fmt.Sprintf("op %d (%s) never reached %s on this run", k, op, crash))
		crash = ""
	}
	if crash != "" {
		killed = points[len(points)-1]
		r.killed = append(r.killed, killed)
		r.story = append(r.story, fmt.Sprintf("A op %d %s: killed at point %d, %s (%s)", k, op, killed.n, crash, killed.detail))
		if op == "restore" || op == "revert" {
			r.mayDiffer |= 1 << (k - 1)
		}
		return
	}
	r.killed = append(r.killed, killed)
	r.story = append(r.story, fmt.Sprintf("A op %d %s: exit %d", k, op, o.code))
	if o.code == 1 && reportCode(o) == "RECOVERY_FAILURE" {
		o = w.exec("a", nil, args...)
		r.story = append(r.story, fmt.Sprintf("A op %d %s again: exit %d", k, op, o.code))
	}
	if o.code != 0 {
		if (op == "restore" || op == "revert") && o.code == 1 {
			// Refused (uncommitted work it would overwrite, say): as if not run.
			r.mayDiffer |= 1 << (k - 1)
			r.story = append(r.story, "  refused: "+firstLine(o.stdout))
			return
		}
		r.problems = append(r.problems, fmt.Sprintf("A's op %d (%s) failed:\n%s", k, op, o))
	}
}

func reportCode(o outcome) string {
	if r, ok := parseReport(o.stdout); ok {
		return r.code
	}
	return ""
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }

func readTrace(t *testing.T, path string) []tracePoint {
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []tracePoint
	for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if l == "" {
			continue
		}
		f := strings.SplitN(l, " ", 3)
		n, _ := strconv.Atoi(f[0])
		label, _, _ := strings.Cut(f[1], "|")
		p := tracePoint{n: n, key: f[1], label: label}
		if len(f) > 2 {
			p.detail = f[2]
		}
		out = append(out, p)
	}
	return out
}

// nodeName names the snapshot of the state before A's op i of case c
// (B's commit before it done).
func nodeName(i int, c crashCase) string {
	return fmt.Sprintf("node-%d-%s", i, strings.ReplaceAll(c.key(i), "/", "_"))
}

// keep snapshots the live state as node i of c, with r the result so far.
func (w *crashWorld) keep(i int, c crashCase, r caseResult) {
	name := nodeName(i, c)
	if _, ok := w.nodes[name]; ok {
		return
	}
	w.snapshot(name)
	w.nodes[name] = r.clone()
	// Go on from the copy, as every later case from this node will: the
	// copy has new inodes, which the engine's stat cache notices, and the
	// crash points of the next op must be numbered as in those cases.
	w.restore(name)
}

func (r caseResult) clone() caseResult {
	r.traces = slices.Clone(r.traces)
	r.killed = slices.Clone(r.killed)
	r.story = slices.Clone(r.story)
	r.problems = slices.Clone(r.problems)
	r.missed = slices.Clone(r.missed)
	return r
}

func (w *crashWorld) step(i int, c crashCase, r *caseResult) {
	if c.skip&(1<<i) != 0 {
		r.traces = append(r.traces, nil)
		r.killed = append(r.killed, tracePoint{})
		r.story = append(r.story, fmt.Sprintf("A op %d %s: skipped", i+1, w.seq[i]))
		return
	}
	w.aOp(i+1, w.seq[i], c.crash[i], r)
}

// run runs case c to the end, from the latest snapshot it shares with
// the cases run before (the crash-free prefix, or the state after its
// first crash).
func (w *crashWorld) run(c crashCase) caseResult {
	n := len(w.seq)
	var r caseResult
	start := -1
	for j := n - 1; j >= 0; j-- {
		if res, ok := w.nodes[nodeName(j, c)]; ok {
			w.restore(nodeName(j, c))
			r, start = res.clone(), j
			break
		}
	}
	if start < 0 {
		w.restore("setup")
		w.bCommit(1, &r)
		start = 0
		w.keep(0, c, r)
	}
	clean := func(upto int) bool { // ops before upto are crash-free and run
		for i := 0; i < upto; i++ {
			if c.crash[i] != "" || c.skip&(1<<i) != 0 {
				return false
			}
		}
		return true
	}
	for i := start; i < n; i++ {
		w.step(i, c, &r)
		w.bCommit(i+2, &r)
		// Keep the states later cases start from: the crash-free run's,
		// and the one after a first crash (where a second one starts).
		if i+1 < n && (clean(i+1) || (c.crash[i] != "" && c.skip == 0 && clean(i))) {
			w.keep(i+1, c, r)
		}
	}
	w.aEdit(n + 1)
	o := w.exec("a", nil, "commit", w.dir("a"), "-m", "final")
	r.story = append(r.story, fmt.Sprintf("A final commit: exit %d", o.code))
	if o.code == 1 && reportCode(o) == "RECOVERY_FAILURE" {
		o = w.exec("a", nil, "commit", w.dir("a"), "-m", "final")
		r.story = append(r.story, fmt.Sprintf("A final commit again: exit %d", o.code))
	}
	if o.code != 0 {
		r.problems = append(r.problems, fmt.Sprintf("A's final commit failed:\n%s", o))
	}
	if o := w.exec("b", nil, "pull", w.dir("b")); o.code != 0 {
		r.problems = append(r.problems, fmt.Sprintf("B's final pull failed:\n%s", o))
	}
	if o := w.exec("b", nil, "verify"); o.code != 0 {
		r.problems = append(r.problems, fmt.Sprintf("verify is not clean:\n%s", o))
	}
	r.files = w.files("b")
	r.aFiles = w.files("a")
	return r
}

// written is what the notebook must hold after the case's ops ran (with
// the ops of skip not run): A's and B's log lines.
func (w *crashWorld) written(skip int) map[string]int {
	n := len(w.seq)
	want := map[string]int{"# log": 1}
	for j := 1; j <= n+1; j++ {
		want[fmt.Sprintf("B %d line1", j)]++
	}
	for k := 1; k <= n; k++ {
		if w.seq[k-1] == "commit" && skip&(1<<(k-1)) == 0 {
			want[fmt.Sprintf("A op%d line1", k)]++
		}
	}
	want[fmt.Sprintf("A op%d line1", n+1)]++
	return want
}

// checkWritten checks the reference against what was written.
func (w *crashWorld) checkWritten(r caseResult) string {
	return multisetDiff("log.md", lineCounts(r.files["log.md"]), w.written(0))
}

func lineCounts(s string) map[string]int {
	m := map[string]int{}
	for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		if s != "" {
			m[l]++
		}
	}
	return m
}

// multisetDiff says, line by line, what is duplicated, lost or foreign.
func multisetDiff(file string, got, want map[string]int) string {
	var b strings.Builder
	for _, l := range slices.Sorted(maps.Keys(want)) {
		switch g := got[l]; {
		case g == 0:
			fmt.Fprintf(&b, "%s: LOST %q (written %d time(s), present 0 times)\n", file, l, want[l])
		case g > want[l]:
			fmt.Fprintf(&b, "%s: DUPLICATED %q (written %d time(s), present %d times)\n", file, l, want[l], g)
		case g < want[l]:
			fmt.Fprintf(&b, "%s: LOST %q (written %d time(s), present %d times)\n", file, l, want[l], g)
		}
	}
	for _, l := range slices.Sorted(maps.Keys(got)) {
		if want[l] == 0 {
			fmt.Fprintf(&b, "%s: FOREIGN %q present %d time(s), never written\n", file, l, got[l])
		}
	}
	return b.String()
}

// audit fails the case unless its result matches the reference (or,
// for a.md, a reference without restores/reverts that were cut short).
func (w *crashWorld) audit(t *testing.T, c crashCase, r caseResult) {
	var msgs []string
	msgs = append(msgs, r.problems...)
	ref := w.refs[0]
	if d := multisetDiff("log.md", lineCounts(r.files["log.md"]), lineCounts(ref.files["log.md"])); d != "" {
		msgs = append(msgs, d+"log.md now:\n  "+strings.ReplaceAll(strings.TrimSuffix(r.files["log.md"], "\n"), "\n", "\n  "))
	}
	for _, f := range slices.Sorted(maps.Keys(r.files)) {
		if f != "a.md" && f != "log.md" && strings.Contains(r.files[f], "<<<<<<<") {
			msgs = append(msgs, fmt.Sprintf("%s: CONFLICT BLOCK in a file A never edited", f))
		}
	}
	for _, f := range slices.Sorted(maps.Keys(r.aFiles)) {
		if f != "a.md" && f != "log.md" && strings.Contains(r.aFiles[f], "<<<<<<<") {
			msgs = append(msgs, fmt.Sprintf("%s: CONFLICT BLOCK in A's directory, in a file A never edited", f))
		}
	}
	for _, f := range []string{"b/b.md", "b/note.md"} {
		if r.files[f] != ref.files[f] {
			msgs = append(msgs, fmt.Sprintf("%s is %q, want %q (only B edits it)", f, r.files[f], ref.files[f]))
		}
	}
	for f := range r.files {
		if _, ok := ref.files[f]; !ok {
			msgs = append(msgs, fmt.Sprintf("%s is in the notebook, not in the crash-free run's", f))
		}
	}
	// a.md: the reference, or a reference without some of the
	// restores/reverts that were killed or refused.
	okA := false
	var wantA []string
	for mask := 0; mask < 1<<len(w.seq); mask++ {
		if mask&^r.mayDiffer != 0 {
			continue
		}
		v := w.reference(mask)
		wantA = append(wantA, fmt.Sprintf("%q", v.files["a.md"]))
		if v.files["a.md"] == r.files["a.md"] {
			okA = true
		}
	}
	if !okA {
		msgs = append(msgs, fmt.Sprintf("a.md is %q, want one of %s", r.files["a.md"], strings.Join(wantA, " or ")))
	}
	if !maps.Equal(r.aFiles, r.files) {
		var diffs []string
		for _, f := range slices.Sorted(maps.Keys(r.aFiles)) {
			if r.aFiles[f] != r.files[f] {
				diffs = append(diffs, fmt.Sprintf("%s: A has %q, the notebook %q", f, r.aFiles[f], r.files[f]))
			}
		}
		for f := range r.files {
			if _, ok := r.aFiles[f]; !ok {
				diffs = append(diffs, fmt.Sprintf("%s: missing from A's directory", f))
			}
		}
		msgs = append(msgs, "A's directory after its final commit differs from the notebook:\n  "+strings.Join(diffs, "\n  "))
	}
	if len(msgs) == 0 && len(r.missed) > 0 {
		w.st.addMissed()
		t.Skipf("not the case named: %s", strings.Join(r.missed, "; "))
	}
	if len(msgs) > 0 {
		msgs = append(msgs, r.missed...)
		t.Errorf("case %s\nreplay: go test -count=1 -run '%s' ./cmd/slivingdoc/\nwhat happened:\n  %s\nfound:\n%s",
			strings.TrimPrefix(w.replayName(c), "TestCrashExhaustive/"), w.replayName(c), strings.Join(r.story, "\n  "), strings.Join(msgs, "\n"))
	}
}
