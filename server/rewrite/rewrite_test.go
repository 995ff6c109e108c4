package rewrite

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/dircall"
	"github.com/slivingdoc/slivingdoc/server/dirstate"
	"github.com/slivingdoc/slivingdoc/server/objcache"
	"github.com/slivingdoc/slivingdoc/server/plan"
	"github.com/slivingdoc/slivingdoc/server/pstate"
	"github.com/slivingdoc/slivingdoc/server/rules"
	"github.com/slivingdoc/slivingdoc/server/storeview"
	"github.com/slivingdoc/slivingdoc/server/workdir"
)

// The scene every test here rewrites: L and its baseline A at generation
// 1, and the rewrite a pull of generation 2 (R) would make, planned by
// hand (server/plan's output, which this package only carries out):
//
//	a.md    R appended a line: L gets R's file
//	b.md    untouched
//	c.md    L edited the end, R the start: L gets the merge, which is
//	        no file of R (the next baseline records R's c.md)
//	gone.md R removed it
//	new.md  R added it
var (
	aOld, aNew   = "a\n1\n2\n", "a\n1\n2\nr\n"
	bText        = "b\n"
	cBase, cOld  = "1\n2\n3\n", "1\n2\n3\nlocal\n"
	cR, cMerged  = "r\n2\n3\n", "r\n2\n3\nlocal\n"
	goneText     = "g\n"
	newText      = "n\n"
	lBefore      = map[string]string{"a.md": aOld, "b.md": bText, "c.md": cOld, "gone.md": goneText}
	lAfter       = map[string]string{"a.md": aNew, "b.md": bText, "c.md": cMerged, "new.md": newText}
	headA, headR = id("head of generation 1"), id("head of generation 2")
)

func id(s string) cas.ID {
	got, err := cas.WriteFile(nil, []byte(s))
	if err != nil {
		panic(err)
	}
	return got
}

// scene is one directory L with its private records P, and what the
// rewrite towards R needs.
type scene struct {
	t    *testing.T
	env  *dircall.Env
	l    string
	st   dirstate.State
	mu   sync.Mutex
	base map[string]cas.ID // A's tree
	next map[string]cas.ID // R's tree, the next baseline
	live []*dircall.Call   // calls not yet ended
}

// end ends a call open opened.
func (sc *scene) end(s *dircall.Call) {
	for i, c := range sc.live {
		if c == s {
			sc.live = append(sc.live[:i], sc.live[i+1:]...)
			s.End()
			return
		}
	}
}

func newScene(t *testing.T) *scene {
	t.Helper()
	ws := t.TempDir()
	l := filepath.Join(ws, "notes")
	pdir := filepath.Join(t.TempDir(), "dirs", "x")
	for _, d := range []string{l, pdir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ign, err := workdir.NewIgnore(nil, true)
	if err != nil {
		t.Fatal(err)
	}
	sc := &scene{
		t: t, l: l,
		env: &dircall.Env{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Ignore: ign, Probe: &storeview.Verdict{},
			Workspace: rules.Workspace{Root: ws, Default: l}},
		st:   dirstate.State{Dir: pstate.Dir{Path: pdir, L: l, Store: "test"}},
		base: map[string]cas.ID{"a.md": id(aOld), "b.md": id(bText), "c.md": id(cBase), "gone.md": id(goneText)},
		next: map[string]cas.ID{"a.md": id(aNew), "b.md": id(bText), "c.md": id(cR), "new.md": id(newText)},
	}
	t.Cleanup(func() {
		for _, s := range sc.live {
			s.End()
		}
	})
	for p, c := range lBefore {
		sc.write(p, c)
	}
	if err := sc.st.SaveBaseline(dirstate.NewBaseline(1, headA, sc.base)); err != nil {
		t.Fatal(err)
	}
	return sc
}

func (sc *scene) write(p, content string) {
	sc.t.Helper()
	if err := os.WriteFile(filepath.Join(sc.l, p), []byte(content), 0o644); err != nil {
		sc.t.Fatal(err)
	}
}

// open starts a call on L and scans it, as a pull does before it plans.
func (sc *scene) open() *dircall.Call {
	sc.t.Helper()
	s, err := dircall.Open(sc.env, context.Background(), sc.l, sc.st, &sc.mu)
	if err != nil {
		sc.t.Fatal(err)
	}
	sc.live = append(sc.live, s)
	if err := s.OpenL(false); err != nil {
		sc.t.Fatal(err)
	}
	if _, err := s.ScanL(); err != nil {
		sc.t.Fatal(err)
	}
	return s
}

// changes is the plan that brings the scanned L to lAfter.
func (sc *scene) changes(s *dircall.Call) []plan.Change {
	var out []plan.Change
	for _, p := range []string{"a.md", "c.md", "gone.md", "new.md"} {
		c := plan.Change{Path: p}
		if old, ok := lBefore[p]; ok {
			c.Old = []byte(old)
			was, _ := s.Scan.Stats.Get(p)
			c.Was = &was
		}
		if content, ok := lAfter[p]; ok {
			c.Content, c.ID = []byte(content), id(content)
		} else {
			c.Del = true
		}
		out = append(out, c)
	}
	return out
}

func (sc *scene) materialise(s *dircall.Call) error {
	return Materialise(s, sc.changes(s), pstate.RecoveryFlag{Op: "pull", RemoteAccepted: "no", Generation: 2},
		dirstate.NewBaseline(2, headR, sc.next), false)
}

// files is L as it is on disk.
func (sc *scene) files() map[string]string {
	sc.t.Helper()
	out := map[string]string{}
	ents, err := os.ReadDir(sc.l)
	if err != nil {
		sc.t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(sc.l, e.Name()))
		if err != nil {
			sc.t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

func sameFiles(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for p, c := range a {
		if d, ok := b[p]; !ok || c != d {
			return false
		}
	}
	return true
}

// records is what P holds of a rewrite right now.
type records struct {
	next     *pstate.Baseline // the next baseline's spare, if any (after a rewrite: the baseline before)
	oldNext  bool             // an earlier version's baseline.next is there
	baseline *pstate.Baseline // the recorded A
	flag     *pstate.RecoveryFlag
	rewrites []string // checksums of the rewrite records present
	held     map[string]bool
}

func (sc *scene) records() records {
	sc.t.Helper()
	var r records
	d := sc.st.Dir
	if data, err := os.ReadFile(d.File(pstate.NextBaselineSpare)); err == nil {
		if r.next, err = pstate.DecodeBaseline(data); err != nil {
			sc.t.Fatalf("next baseline's spare unreadable: %v", err)
		}
	}
	if _, err := os.Lstat(d.File("baseline.next")); err == nil {
		r.oldNext = true
	}
	b, err := sc.st.LoadBaseline()
	if err != nil || b == nil {
		sc.t.Fatalf("baseline %v, %v", b, err)
	}
	r.baseline = &b.Baseline
	if r.flag, err = d.LoadRecovery(); err != nil {
		sc.t.Fatal(err)
	}
	names, _ := filepath.Glob(d.File("rewrite-*"))
	for _, n := range names {
		r.rewrites = append(r.rewrites, strings.TrimPrefix(filepath.Base(n), "rewrite-"))
	}
	r.held = map[string]bool{}
	for _, c := range []string{cOld, cMerged, aOld, aNew, cBase, cR} {
		if _, ok := d.LoadHeld(id(c)); ok {
			r.held[c] = true
		}
	}
	return r
}

// wantCatalogued: a failure before L was touched is an ordinary
// catalogued error, never an Interrupted one.
func wantCatalogued(t *testing.T, err error) {
	t.Helper()
	var in *Interrupted
	var de *diag.Error
	if errors.As(err, &in) || !errors.As(err, &de) {
		t.Fatalf("a failure before L changed: %T %v, want a catalogued error", err, err)
	}
}

func wantInterrupted(t *testing.T, err error, stage string) *Interrupted {
	t.Helper()
	var in *Interrupted
	if !errors.As(err, &in) || in.Stage != stage || in.Flag.Op != "pull" || in.Flag.Generation != 2 {
		t.Fatalf("got %T %v, want an Interrupted at stage %q for the pull's flag", err, err, stage)
	}
	return in
}

var errInjected = errors.New("injected")

// failAt makes the failpoint name return errInjected once, running
// also (if set) just before; the test fails if it never fired.
func failAt(t *testing.T, name string, also func()) {
	t.Helper()
	fired := false
	SetFailHook(func(n string) error {
		if n != name || fired {
			return nil
		}
		fired = true
		if also != nil {
			also()
		}
		return errInjected
	})
	t.Cleanup(func() {
		SetFailHook(nil)
		if !fired {
			t.Errorf("failpoint %s never fired", name)
		}
	})
}

// The rewrite done: L holds the plan, A is the next baseline, and none
// of the rewrite's records is left (flag, record); the next baseline's
// spare holds the baseline before, named by no record.
func TestMaterialiseRewritesAndClearsItsRecords(t *testing.T) {
	sc := newScene(t)
	s := sc.open()
	if err := sc.materialise(s); err != nil {
		t.Fatal(err)
	}
	if got := sc.files(); !sameFiles(got, lAfter) {
		t.Fatalf("L = %q, want %q", got, lAfter)
	}
	r := sc.records()
	if r.flag != nil || len(r.rewrites) != 0 || r.oldNext {
		t.Fatalf("left behind: flag %+v, records %v, baseline.next %v", r.flag, r.rewrites, r.oldNext)
	}
	if r.baseline == nil || r.baseline.Generation != 2 || r.baseline.Head != headR || !maps.Equal(r.baseline.Tree(), sc.next) {
		t.Fatalf("baseline %+v, want R's", r.baseline)
	}
	if s.Base.Generation != 2 {
		t.Fatalf("the call's A is generation %d", s.Base.Generation)
	}
}

// Before L's first file changes, P holds durably the next baseline, the
// contents settling may need, the rewrite record and the recovery flag,
// in that order. Each step is made to fail in turn (or stopped right after
// by its failpoint): what came before it is in P, nothing after it is, and
// L is untouched, so the failure is an ordinary catalogued error.
func TestRecordsComeBeforeLInOrder(t *testing.T) {
	// A regular file where P keeps a directory, or a directory where it
	// keeps a file, fails that write whoever runs the test (root too).
	block := func(t *testing.T, sc *scene, name string, dir bool) {
		t.Helper()
		p := sc.st.Dir.File(name)
		if !dir {
			if err := os.WriteFile(p, []byte("in the way"), 0o600); err != nil {
				t.Fatal(err)
			}
			return
		}
		if err := os.MkdirAll(filepath.Join(p, "in-the-way"), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("next baseline fails", func(t *testing.T) {
		sc := newScene(t)
		s := sc.open()
		block(t, sc, pstate.NextBaselineSpare, true)
		wantCatalogued(t, sc.materialise(s))
		r := sc.records()
		if len(r.held) != 0 || len(r.rewrites) != 0 || r.flag != nil {
			t.Fatalf("written after a failed next baseline: held %v, records %v, flag %+v", r.held, r.rewrites, r.flag)
		}
		if got := sc.files(); !sameFiles(got, lBefore) {
			t.Fatalf("L changed: %q", got)
		}
	})

	t.Run("kept contents fail", func(t *testing.T) {
		sc := newScene(t)
		s := sc.open()
		block(t, sc, "held", false)
		wantCatalogued(t, sc.materialise(s))
		r := sc.records()
		if r.next == nil || r.next.Generation != 2 || !maps.Equal(r.next.Tree(), sc.next) {
			t.Fatalf("next baseline %+v, want R's, durable before the kept contents", r.next)
		}
		if len(r.rewrites) != 0 || r.flag != nil {
			t.Fatalf("written after failed kept contents: records %v, flag %+v", r.rewrites, r.flag)
		}
		if got := sc.files(); !sameFiles(got, lBefore) {
			t.Fatalf("L changed: %q", got)
		}
	})

	t.Run("after the record", func(t *testing.T) {
		sc := newScene(t)
		s := sc.open()
		var r records
		failAt(t, FailAfterRewriteRecord, func() { r = sc.records() })
		wantCatalogued(t, sc.materialise(s))
		if r.next == nil || !maps.Equal(r.next.Tree(), sc.next) {
			t.Fatalf("next baseline %+v", r.next)
		}
		// L's edited file (not A's head's) and the merge (not R's file)
		// are in no pack: P keeps them.
		if !r.held[cOld] || !r.held[cMerged] {
			t.Fatalf("kept contents %v, want L's edited c.md and the merge", r.held)
		}
		if len(r.rewrites) != 1 || r.flag != nil {
			t.Fatalf("records %v, flag %+v: want one record and no flag yet", r.rewrites, r.flag)
		}
		rec, err := sc.st.LoadRewrite(r.rewrites[0])
		if err != nil || rec == nil {
			t.Fatalf("record unreadable: %v", err)
		}
		byPath := map[string]pstate.RewriteEntry{}
		for _, e := range rec.Entries {
			byPath[e.Path] = e
		}
		want := map[string]pstate.RewriteEntry{
			"a.md":    {Path: "a.md", Before: id(aOld), After: id(aNew), BaseBefore: id(aOld)},
			"c.md":    {Path: "c.md", Before: id(cOld), After: id(cMerged), BaseBefore: id(cBase)},
			"gone.md": {Path: "gone.md", Before: id(goneText), BaseBefore: id(goneText)},
			"new.md":  {Path: "new.md", After: id(newText)},
		}
		if len(byPath) != len(want) {
			t.Fatalf("record covers %d paths, want %d", len(byPath), len(want))
		}
		for p, w := range want {
			if byPath[p] != w {
				t.Errorf("record of %s: %+v, want %+v", p, byPath[p], w)
			}
		}
		if next, _, _ := sc.st.LoadNextBaseline(rec.NextSum); next == nil || next.Generation != 2 {
			t.Fatalf("the record does not name the next baseline")
		}
		if got := sc.files(); !sameFiles(got, lBefore) {
			t.Fatalf("L changed before the flag: %q", got)
		}
	})

	t.Run("flag fails", func(t *testing.T) {
		sc := newScene(t)
		s := sc.open()
		// Once the record is durable, put a directory where the flag goes.
		SetFailHook(func(n string) error {
			if n == FailAfterRewriteRecord {
				block(t, sc, "recovery", true)
			}
			return nil
		})
		t.Cleanup(func() { SetFailHook(nil) })
		wantCatalogued(t, sc.materialise(s))
		if err := os.RemoveAll(sc.st.Dir.File("recovery")); err != nil {
			t.Fatal(err)
		}
		r := sc.records()
		if r.next == nil || len(r.rewrites) != 1 || !r.held[cMerged] {
			t.Fatalf("before the flag: next %v, records %v, held %v", r.next != nil, r.rewrites, r.held)
		}
		if got := sc.files(); !sameFiles(got, lBefore) {
			t.Fatalf("L changed without a flag: %q", got)
		}
	})

	t.Run("after the flag", func(t *testing.T) {
		sc := newScene(t)
		s := sc.open()
		var r records
		var l map[string]string
		failAt(t, FailAfterRecoveryFlag, func() { r, l = sc.records(), sc.files() })
		in := wantInterrupted(t, sc.materialise(s), "rewrite")
		if !errors.Is(in, errInjected) {
			t.Fatalf("cause %v", in.Err)
		}
		if r.flag == nil || r.flag.Stage != "rewrite" || len(r.rewrites) != 1 || r.flag.Rewrite != r.rewrites[0] {
			t.Fatalf("flag %+v, records %v: want the flag naming the record", r.flag, r.rewrites)
		}
		if !sameFiles(l, lBefore) {
			t.Fatalf("L changed before the flag was durable: %q", l)
		}
	})
}

// Once the flag stands, every failure is an Interrupted carrying the
// flag and the stage, and the flag stays: only A's recording clears it.
func TestInterruptedOnceLMayHaveChanged(t *testing.T) {
	for _, tc := range []struct {
		fp, stage string
		l         map[string]string // L after the failure (nil: not checked)
		gen       uint64            // the recorded A's generation
	}{
		{FailAfterRecoveryFlag, "rewrite", lBefore, 1},
		{FailMidRewrite, "rewrite", nil, 1},
		{FailAfterRewrite, "rewrite", lAfter, 1},
		{FailAfterBaseline, "baseline", lAfter, 2},
	} {
		t.Run(tc.fp, func(t *testing.T) {
			sc := newScene(t)
			s := sc.open()
			failAt(t, tc.fp, nil)
			in := wantInterrupted(t, sc.materialise(s), tc.stage)
			if !errors.Is(in, errInjected) {
				t.Fatalf("cause %v", in.Err)
			}
			r := sc.records()
			if r.flag == nil || len(r.rewrites) != 1 || r.flag.Rewrite != r.rewrites[0] {
				t.Fatalf("flag %+v, records %v: the flag must stand until A is recorded", r.flag, r.rewrites)
			}
			if r.baseline.Generation != tc.gen {
				t.Fatalf("recorded A is generation %d, want %d", r.baseline.Generation, tc.gen)
			}
			if got := sc.files(); tc.l != nil && !sameFiles(got, tc.l) {
				t.Fatalf("L = %q, want %q", got, tc.l)
			}
		})
	}

	// A cannot be recorded (a directory where it goes): the flag stays.
	t.Run("baseline fails", func(t *testing.T) {
		sc := newScene(t)
		s := sc.open()
		p := sc.st.Dir.File("baseline")
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(p, "in-the-way"), 0o755); err != nil {
			t.Fatal(err)
		}
		wantInterrupted(t, sc.materialise(s), "baseline")
		if flag, err := sc.st.LoadRecovery(); err != nil || flag == nil {
			t.Fatalf("flag %+v, %v: cleared though A was not recorded", flag, err)
		}
		if got := sc.files(); !sameFiles(got, lAfter) {
			t.Fatalf("L = %q", got)
		}
	})
}

// A failure before L was touched while an earlier flag still stands is
// Interrupted too: L may hold that earlier rewrite's files.
func TestFailureUnderAnEarlierFlagIsInterrupted(t *testing.T) {
	sc := newScene(t)
	if err := sc.st.SetRecovery(pstate.RecoveryFlag{Op: "pull", Stage: "rewrite", RemoteAccepted: "no", Generation: 2}); err != nil {
		t.Fatal(err)
	}
	s := sc.open()
	failAt(t, FailAfterRewriteRecord, nil)
	wantInterrupted(t, sc.materialise(s), "rewrite")
}

// Settling an interrupted rewrite, at each instant the failpoints name,
// records one baseline that gives each path the base of what L holds:
// the old file keeps A's base, the new one R's, a removal or an addition
// not yet made leaves the path as A had it. The flag, the record and the
// next baseline are gone after it, and a second settle has nothing to do.
func TestSettleGivesEachPathTheBaseOfWhatLHolds(t *testing.T) {
	for _, fp := range Failpoints {
		if fp == FailAfterPublish {
			continue // a commit's: the rewrite never reaches it
		}
		t.Run(fp, func(t *testing.T) {
			sc := newScene(t)
			s := sc.open()
			failAt(t, fp, nil)
			_ = sc.materialise(s)
			sc.end(s)
			SetFailHook(nil)

			s = sc.open()
			flag, err := sc.st.LoadRecovery()
			if err != nil {
				t.Fatal(err)
			}
			if fp == FailAfterRewriteRecord {
				// Stopped before the flag: L and A are as before.
				if flag != nil || !sameFiles(sc.files(), lBefore) {
					t.Fatalf("flag %+v, L %q", flag, sc.files())
				}
				if ok, err := Settle(s, flag, true); ok || err != nil {
					t.Fatalf("settled without a flag: %v, %v", ok, err)
				}
				return
			}
			if ok, err := Settle(s, flag, true); !ok || err != nil {
				t.Fatalf("Settle: %v, %v", ok, err)
			}
			checkSettled(t, sc, s)
		})
	}
}

// A directory an earlier version left mid-rewrite, at each instant the
// failpoints name, is settled as one this version left: that version
// wrote the next baseline to baseline.next (installed by rename) and
// made no spares; the record and the flag are as this version writes
// them. The next baseline is found in baseline.next, and the file is
// removed with the record.
func TestSettleWhatAnEarlierVersionLeft(t *testing.T) {
	for _, fp := range Failpoints {
		if fp == FailAfterPublish || fp == FailAfterRewriteRecord {
			continue // a commit's; no flag
		}
		t.Run(fp, func(t *testing.T) {
			sc := newScene(t)
			s := sc.open()
			failAt(t, fp, nil)
			_ = sc.materialise(s)
			sc.end(s)
			SetFailHook(nil)
			asEarlierVersion(t, sc, fp)

			s = sc.open()
			flag, err := sc.st.LoadRecovery()
			if err != nil || flag == nil {
				t.Fatalf("flag %+v, %v", flag, err)
			}
			if ok, err := Settle(s, flag, true); !ok || err != nil {
				t.Fatalf("Settle: %v, %v", ok, err)
			}
			checkSettled(t, sc, s)
			// And the next rewrite goes on from there as usual.
			sc.end(s)
			s = sc.open()
			if err := Materialise(s, nil, pstate.RecoveryFlag{Op: "pull", RemoteAccepted: "no", Generation: 3},
				dirstate.NewBaseline(3, headR, s.Base.Tree()), false); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// asEarlierVersion turns P as this version left it into what an earlier
// version leaves at the same instant: the next baseline, if no rewrite
// installed it yet, under baseline.next, and no spare.
func asEarlierVersion(t *testing.T, sc *scene, fp string) {
	t.Helper()
	d := sc.st.Dir
	flag, err := d.LoadRecovery()
	if err != nil || flag == nil {
		t.Fatalf("flag %+v, %v", flag, err)
	}
	rec, err := d.LoadRewrite(flag.Rewrite)
	if err != nil || rec == nil {
		t.Fatalf("record %v, %v", rec, err)
	}
	spare := d.File(pstate.NextBaselineSpare)
	if _, n, installed := d.LoadNextBaseline(rec.NextSum); n.File == pstate.NextBaselineSpare && !installed {
		if err := os.Rename(spare, d.File("baseline.next")); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{spare, d.File(".rewrite.spare"), d.File(".recovery.spare")} {
		if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
	}
	if _, err := os.Lstat(d.File("baseline.next")); (err == nil) != (fp != FailAfterBaseline) {
		t.Fatalf("baseline.next present: %v", err == nil)
	}
}

// checkSettled: P records a baseline under which L's every file has the
// base it was made from, and none of the rewrite's records.
func checkSettled(t *testing.T, sc *scene, s *dircall.Call) {
	t.Helper()
	l := sc.files()
	want := map[string]cas.ID{}
	for p, content := range l {
		switch {
		case p == "c.md" && content == cMerged:
			want[p] = id(cR)
		case p == "c.md" && content == cOld:
			want[p] = id(cBase)
		case content == lAfter[p]:
			want[p] = sc.next[p]
		case content == lBefore[p]:
			want[p] = sc.base[p]
		default:
			t.Fatalf("L holds %s = %q, neither version", p, content)
		}
	}
	r := sc.records()
	if r.flag != nil || len(r.rewrites) != 0 || r.oldNext {
		t.Fatalf("left behind: flag %+v, records %v, baseline.next %v", r.flag, r.rewrites, r.oldNext)
	}
	if !maps.Equal(r.baseline.Tree(), want) {
		t.Fatalf("settled baseline\n%v\nwant the bases of L's files\n%v\n(L %q)", names(r.baseline.Tree()), names(want), l)
	}
	if !maps.Equal(s.Base.Tree(), want) {
		t.Fatalf("the call's A differs from the recorded one")
	}
	if r.baseline.Generation != 2 || r.baseline.Head != headR {
		t.Fatalf("settled at generation %d", r.baseline.Generation)
	}
}

func names(m map[string]cas.ID) []string {
	var out []string
	for p, id := range m {
		out = append(out, p+"="+id.String()[:8])
	}
	sort.Strings(out)
	return out
}

// A file the caller edited after the crash holds neither version: it gets
// the base of the version its edit was made from (here the old c.md, not
// reached by the rewrite, edited at its end), never R's.
func TestSettleTellsTheVersionAnEditWasMadeFrom(t *testing.T) {
	for _, tc := range []struct {
		name, fp, edit string
		base           cas.ID
	}{
		{"old file edited", FailAfterRecoveryFlag, cOld + "user\n", id(cBase)},
		{"new file edited", FailAfterRewrite, cMerged + "user\n", id(cR)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := newScene(t)
			s := sc.open()
			failAt(t, tc.fp, nil)
			_ = sc.materialise(s)
			sc.end(s)
			SetFailHook(nil)
			sc.write("c.md", tc.edit)

			s = sc.open()
			flag, err := sc.st.LoadRecovery()
			if err != nil || flag == nil {
				t.Fatalf("flag %+v, %v", flag, err)
			}
			// The chain is synced (a pull settles once it can read it): an
			// empty one, since everything settling reads is in P or L.
			s.Src = &objcache.Source{}
			if ok, err := Settle(s, flag, true); !ok || err != nil {
				t.Fatalf("Settle: %v, %v", ok, err)
			}
			b, err := sc.st.LoadBaseline()
			if err != nil {
				t.Fatal(err)
			}
			if got := b.Tree()["c.md"]; got != tc.base {
				t.Fatalf("edited c.md settled on %v, want %v", got, tc.base)
			}
		})
	}
}
