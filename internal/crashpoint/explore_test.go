package crashpoint

import (
	"errors"
	"slices"
	"testing"
)

// A run of three binary choices fails only on 1,0,1: Explore finds it
// after enumerating the schedules before it in depth-first order, Replay
// reproduces it, and Sample finds it from some seed.
func TestExploreEnumeratesAndReplays(t *testing.T) {
	run := func(choose Choose) Outcome {
		var got []int
		for i := 0; i < 3; i++ {
			got = append(got, choose(2, i == 1))
		}
		o := Outcome{Trace: []string{"ran"}, Faulted: got[1] == 1}
		if slices.Equal(got, []int{1, 0, 1}) {
			o.Err = errors.New("broken")
		}
		return o
	}
	st, f := Explore(run, 0)
	if f == nil || !slices.Equal(f.Choices, []int{1, 0, 1}) || st.Schedules != 6 {
		t.Fatalf("explore: %+v %v", st, f)
	}
	if o := Replay(run, f.Choices); o.Err == nil {
		t.Fatal("replay did not fail")
	}
	st, f = Explore(func(c Choose) Outcome { o := run(c); o.Err = nil; return o }, 0)
	if f != nil || st.Schedules != 8 || st.Faulted != 4 {
		t.Fatalf("every schedule: %+v", st)
	}
	if _, f := Sample(run, 1, 200); f == nil || f.Seed == 0 {
		t.Fatal("sample never met the failing schedule")
	}
	if _, f := Explore(run, 3); f != nil {
		t.Fatal("the limit was not honoured")
	}
}
