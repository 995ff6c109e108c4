package pending

import (
	"context"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/dirstate"
	"github.com/slivingdoc/slivingdoc/server/pstate"
)

// history answers Publications from a fixed list, or fails with err; it
// counts its calls.
type history struct {
	incs  []remote.Increment
	err   error
	calls int
}

func (h *history) Publications(_ context.Context, _ remote.State, from, to uint64) ([]remote.Increment, error) {
	h.calls++
	if h.err != nil {
		return nil, h.err
	}
	var out []remote.Increment
	for _, inc := range h.incs {
		if inc.Generation >= from && inc.Generation <= to {
			out = append(out, inc)
		}
	}
	return out, nil
}

func id(t *testing.T, s string) cas.ID {
	t.Helper()
	got, err := cas.WriteFile(nil, []byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func hexOf(i cas.ID) string { return hex.EncodeToString(i[:]) }

// fixture is a directory's records and a baseline A of generation 3 with
// a.txt and b.txt.
type fixture struct {
	dir    pstate.Dir
	base   *dirstate.Baseline
	tr     Tracker
	a, b   cas.ID
	headID cas.ID
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{dir: pstate.Dir{Path: t.TempDir()}, a: id(t, "a\n"), b: id(t, "b\n"), headID: id(t, "head")}
	f.base = dirstate.NewBaseline(3, f.headID, map[string]cas.ID{"a.txt": f.a, "b.txt": f.b})
	f.tr = New(f.dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	return f
}

func (f *fixture) save(t *testing.T, baseHead cas.ID, entries ...pstate.PendingEntry) {
	t.Helper()
	if err := f.dir.SavePending(&pstate.PendingRecord{BaseHead: hexOf(baseHead), Entries: entries}); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) record(t *testing.T) *pstate.PendingRecord {
	t.Helper()
	rec, err := f.dir.LoadPending()
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// current is a `current` at generation gen whose increments name pubs.
func current(gen uint64, pubs ...string) remote.State {
	m := &remote.Manifest{Version: 2, Generation: gen}
	for i, p := range pubs {
		m.Increments = append(m.Increments, remote.Increment{Generation: gen - uint64(len(pubs)-1-i), Publication: p})
	}
	return remote.State{Manifest: m}
}

func TestAdoptAppliesAnAcceptedOverlayOnce(t *testing.T) {
	f := newFixture(t)
	merged := []byte("a, as L held it\n")
	mergedID := id(t, string(merged))
	c := id(t, "c\n")
	f.save(t, f.headID, pstate.PendingEntry{Publication: "p1",
		Overlay: map[string]string{"a.txt": hexOf(mergedID), "b.txt": "", "c.txt": hexOf(c)},
		Bases:   map[string][]byte{"a.txt": merged}})

	got := f.tr.Adopt(context.Background(), &history{}, f.base, current(4, "p1"))
	if got == f.base {
		t.Fatal("an accepted publication was not adopted")
	}
	tree := got.Tree()
	if tree["a.txt"] != mergedID || tree["c.txt"] != c || len(tree) != 2 {
		t.Fatalf("adopted tree = %v", tree)
	}
	if got.Head != f.base.Head || got.Generation != f.base.Generation {
		t.Fatalf("adoption moved A's head or generation: %d %x", got.Generation, got.Head)
	}
	// The overlaid paths are held: no fast path may trust the head there.
	if got.Exact() || got.Held["a.txt"] != f.a || got.Held["b.txt"] != f.b || got.Held["c.txt"] != (cas.ID{}) {
		t.Fatalf("held = %v", got.Held)
	}
	if c, ok := f.tr.Content(mergedID); !ok || string(c) != string(merged) {
		t.Fatalf("Content(%x) = %q, %v", mergedID, c, ok)
	}
	if f.record(t) == nil {
		t.Fatal("the record was dropped while its base is still A")
	}
	// Once per call: a second Adopt leaves A as it is.
	if again := f.tr.Adopt(context.Background(), &history{}, f.base, current(4, "p1")); again != f.base {
		t.Fatal("the record was adopted twice in one call")
	}
	f.tr.Recheck()
	if again := f.tr.Adopt(context.Background(), &history{}, f.base, current(4, "p1")); again == f.base {
		t.Fatal("Recheck did not make the record read again")
	}
}

func TestAdoptFindsAnOvertakenPublicationInTheHistory(t *testing.T) {
	f := newFixture(t)
	c := id(t, "c\n")
	f.save(t, f.headID, pstate.PendingEntry{Publication: "p1", Overlay: map[string]string{"c.txt": hexOf(c)}})
	h := &history{incs: []remote.Increment{{Generation: 4, Publication: "p1"}}}
	got := f.tr.Adopt(context.Background(), h, f.base, current(9, "later"))
	if got.Tree()["c.txt"] != c {
		t.Fatal("a publication found only in the history since A was not adopted")
	}
	if h.calls != 1 {
		t.Fatalf("history read %d times, want 1", h.calls)
	}
}

func TestAdoptKeepsARecordTheHistoryCannotDecide(t *testing.T) {
	f := newFixture(t)
	f.save(t, f.headID, pstate.PendingEntry{Publication: "p1", Overlay: map[string]string{"c.txt": hexOf(id(t, "c\n"))}})
	got := f.tr.Adopt(context.Background(), &history{err: errors.New("store down")}, f.base, current(9, "later"))
	if got != f.base {
		t.Fatal("A changed on an undecided record")
	}
	if f.record(t) == nil {
		t.Fatal("a record the history could not decide was dropped")
	}
}

func TestAdoptDropsWhatIsDisproved(t *testing.T) {
	c := "c.txt"
	for _, tc := range []struct {
		name  string
		head  func(f *fixture) cas.ID
		entry pstate.PendingEntry
		state remote.State
	}{
		{"absent", func(f *fixture) cas.ID { return f.headID }, pstate.PendingEntry{Publication: "p1", Overlay: map[string]string{c: ""}}, current(3, "other")},
		{"another base", func(f *fixture) cas.ID { return f.a }, pstate.PendingEntry{Publication: "p1", Overlay: map[string]string{c: ""}}, current(4, "p1")},
		{"empty notebook", func(f *fixture) cas.ID { return f.headID }, pstate.PendingEntry{Publication: "p1", Overlay: map[string]string{c: ""}}, remote.State{}},
		{"malformed ID", func(f *fixture) cas.ID { return f.headID }, pstate.PendingEntry{Publication: "p1", Overlay: map[string]string{c: "zz"}}, current(4, "p1")},
		{"base content not its ID", func(f *fixture) cas.ID { return f.headID }, pstate.PendingEntry{Publication: "p1",
			Overlay: map[string]string{"a.txt": hexOf(cas.ID{1})}, Bases: map[string][]byte{"a.txt": []byte("x")}}, current(4, "p1")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.save(t, tc.head(f), tc.entry)
			if got := f.tr.Adopt(context.Background(), &history{}, f.base, tc.state); got != f.base {
				t.Fatal("A changed")
			}
			if f.record(t) != nil {
				t.Fatal("a disproved record was kept")
			}
		})
	}
}

func TestAdoptKeepsAnUndecidedVersion4Entry(t *testing.T) {
	f := newFixture(t)
	pub := remote.NewUUIDv7()
	f.save(t, f.headID, pstate.PendingEntry{Publication: pub, Overlay: map[string]string{"c.txt": ""}, V4: true, First: 3, Last: 5})
	if got := f.tr.Adopt(context.Background(), &history{}, f.base, current(6, "other")); got != f.base {
		t.Fatal("A changed on an undecided entry")
	}
	if f.record(t) == nil {
		t.Fatal("an undecided version-4 entry was dropped")
	}
	ent, ok := f.tr.Undecided(f.base)
	if !ok || ent.Publication != pub || ent.First != 3 || ent.Last != 5 {
		t.Fatalf("Undecided = %+v, %v", ent, ok)
	}
	// Only while A is the base it was recorded on.
	if _, ok := f.tr.Undecided(dirstate.NewBaseline(6, f.a, nil)); ok {
		t.Fatal("an entry recorded on another base was named undecided")
	}
	// A pull that proves it never accepted forgets it: nothing is left.
	f.tr.Forget(pub)
	if f.record(t) != nil {
		t.Fatal("Forget of the only entry left a record")
	}
}

func TestForgetKeepsTheOtherEntries(t *testing.T) {
	f := newFixture(t)
	pub := remote.NewUUIDv7()
	f.save(t, f.headID, pstate.PendingEntry{Publication: "p0", Overlay: map[string]string{}},
		pstate.PendingEntry{Publication: pub, Overlay: map[string]string{}, V4: true, First: 3})
	f.tr.Forget(pub)
	rec := f.record(t)
	if rec == nil || len(rec.Entries) != 1 || rec.Entries[0].Publication != "p0" {
		t.Fatalf("record after Forget = %+v", rec)
	}
}

func TestRecordKeepsAdoptedEntriesUntilABaselineIsRecorded(t *testing.T) {
	f := newFixture(t)
	c := id(t, "c\n")
	f.save(t, f.headID, pstate.PendingEntry{Publication: "p1", Overlay: map[string]string{"c.txt": hexOf(c)}})
	adopted := f.tr.Adopt(context.Background(), &history{}, f.base, current(4, "p1"))

	if err := f.tr.Record(adopted, pstate.PendingEntry{Publication: "p2", Overlay: map[string]string{}}); err != nil {
		t.Fatal(err)
	}
	rec := f.record(t)
	if rec == nil || rec.BaseHead != hexOf(f.headID) || len(rec.Entries) != 2 || rec.Entries[0].Publication != "p1" || rec.Entries[1].Publication != "p2" {
		t.Fatalf("record = %+v", rec)
	}
	// Recorded on the same head: the record still applies.
	f.tr.Recorded(adopted, f.headID)
	if f.record(t) == nil {
		t.Fatal("the record was dropped though A's head did not move")
	}
	// The adopted entries are in the recorded baseline now: a new
	// attempt records only itself.
	if err := f.tr.Record(adopted, pstate.PendingEntry{Publication: "p3", Overlay: map[string]string{}}); err != nil {
		t.Fatal(err)
	}
	if rec := f.record(t); len(rec.Entries) != 1 || rec.Entries[0].Publication != "p3" {
		t.Fatalf("record after Recorded = %+v", rec)
	}
	// Recorded on another head: the record's base is superseded.
	f.tr.Recorded(adopted, id(t, "next head"))
	if f.record(t) != nil {
		t.Fatal("a superseded record was kept")
	}
}

func TestAcceptedPublicationIsAppliedOnlyToItsBase(t *testing.T) {
	f := newFixture(t)
	c := id(t, "c\n")
	ent := pstate.PendingEntry{Publication: "p1", Overlay: map[string]string{"c.txt": hexOf(c)}, Base: f.headID}
	if f.tr.IfAccepted(f.base) != nil {
		t.Fatal("IfAccepted without an accepted publication")
	}
	f.tr.Accept(ent)
	if files := f.tr.IfAccepted(f.base); files["c.txt"] != c || files["a.txt"] != f.a {
		t.Fatalf("IfAccepted = %v", files)
	}
	other := dirstate.NewBaseline(4, f.a, nil)
	if f.tr.IfAccepted(other) != nil || f.tr.AdoptAccepted(other) != other {
		t.Fatal("an accepted publication was applied to a base it was not built on")
	}
	got := f.tr.AdoptAccepted(f.base)
	if got.Tree()["c.txt"] != c {
		t.Fatal("AdoptAccepted did not apply the publication")
	}
	// Applied once: it is now one of the adopted entries a record keeps.
	if f.tr.AdoptAccepted(got) != got {
		t.Fatal("the accepted publication was applied twice")
	}
	if err := f.tr.Record(got, pstate.PendingEntry{Publication: "p2", Overlay: map[string]string{}}); err != nil {
		t.Fatal(err)
	}
	if rec := f.record(t); len(rec.Entries) != 2 || rec.Entries[0].Publication != "p1" {
		t.Fatalf("record = %+v", rec)
	}
}
