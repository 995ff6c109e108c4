package pubmodel

import (
	"slices"
	"testing"
	"time"
)

// The exhaustive small-scope check of docs/publication.md's invariants:
// every order of two writers' store requests, with up to one fault (a
// death before or after any request, a lost reply of a conditional
// write, applied or not) at any of them. The counts are the schedules
// CI checks; a failure prints its schedule and trace (Replay runs it).
func TestExploreTwoWritersEveryScheduleOneFault(t *testing.T) {
	sc := Scope{Writers: 2, Depth: 20, Faults: 1, Tick: 250 * time.Millisecond}
	st, f := Explore(sc)
	if f != nil {
		t.Fatal(f)
	}
	t.Logf("%d schedules, %d with a fault, %d cut at %d requests, 0 failures", st.Schedules, st.Faulted, st.Cut, sc.Depth)
	if st.Schedules < 20000 || st.Faulted == 0 || st.Cut*10 > st.Schedules {
		t.Fatalf("explored too little: %+v", st)
	}
}

// The same with proposals that fail to merge half the time: declined
// proposals, rebuilt versions under the same ID, a folder's own rebuild.
func TestExploreTwoWritersConflictsOneFault(t *testing.T) {
	sc := Scope{Writers: 2, Depth: 18, Faults: 1, Conflict: 0.5, Tick: 250 * time.Millisecond}
	st, f := Explore(sc)
	if f != nil {
		t.Fatal(f)
	}
	t.Logf("%d schedules, %d with a fault, %d cut at %d requests, 0 failures", st.Schedules, st.Faulted, st.Cut, sc.Depth)
	if st.Schedules < 20000 {
		t.Fatalf("explored too little: %+v", st)
	}
}

// Three writers, two commits each, up to two faults: too many schedules
// to enumerate, so they are drawn from seeds; a failure names its seed.
func TestSampleThreeWritersTwoCommitsTwoFaults(t *testing.T) {
	sc := Scope{Writers: 3, Commits: 2, Depth: 80, Faults: 2, Conflict: 0.2, Tick: 250 * time.Millisecond}
	st, f, seed := Sample(sc, 1, 3000)
	if f != nil {
		t.Fatalf("seed %d: %v", seed, f)
	}
	t.Logf("%d schedules, %d with a fault, %d cut, 0 failures", st.Schedules, st.Faulted, st.Cut)
	if st.Faulted < st.Schedules/4 || st.Cut*10 > st.Schedules {
		t.Fatalf("sampled too little: %+v", st)
	}
}

// The checker can fail: a fold that takes a proposal `current` already
// accepts is found, and its schedule replays to the same failure.
func TestExploreFindsADoubleAcceptance(t *testing.T) {
	sc := Scope{Writers: 2, Depth: 20, Faults: 1, Tick: 250 * time.Millisecond, mutate: true}
	_, f := Explore(sc)
	if f == nil {
		t.Fatal("a fold that takes accepted proposals went unnoticed")
	}
	trace, err := Replay(sc, f.Choices)
	if err == nil || err.Error() != f.Err.Error() || !slices.Equal(trace, f.Trace) {
		t.Fatalf("replay of %v: %v, want %v", f.Choices, err, f.Err)
	}
}
