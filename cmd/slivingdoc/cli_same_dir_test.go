package main

import (
	"maps"
	"sync"
	"testing"
)

// Calls on one directory are serialised across processes: several commits
// of the same edit started at once publish it exactly once, and several
// pulls at once leave the directory equal to the accepted notebook.
func TestCLISameDirectoryProcesses(t *testing.T) {
	const procs = 6
	forEachBackend(t, func(t *testing.T, nb *notebook) {
		a, b := nb.agent("a"), nb.agent("b")
		a.pull()
		a.write("a.md", "one\n")
		a.commit("one")
		a.write("a.md", "one\ntwo\n")
		a.write("new.md", "new\n")

		results := make([]outcome, procs)
		var wg sync.WaitGroup
		for i := range procs {
			wg.Go(func() { results[i] = a.run("commit", a.dir, "-m", "same edit") })
		}
		wg.Wait()
		published := 0
		for _, o := range results {
			r := mustOK(t, o)
			if r.generation != 2 {
				t.Fatalf("generation %d: %s", r.generation, o)
			}
			if len(r.files) > 0 {
				published++
			}
		}
		if published != 1 {
			t.Fatalf("%d of %d concurrent commits published the edit", published, procs)
		}

		b.pull()
		b.write("b.md", "from b\n")
		b.write("a.md", "one\ntwo\nthree\n")
		b.commit("b")
		for i := range procs {
			wg.Go(func() { results[i] = a.run("pull", a.dir) })
		}
		wg.Wait()
		for _, o := range results {
			if r := mustOK(t, o); r.generation != 3 {
				t.Fatalf("pull: %s", o)
			}
		}
		if got := a.files(); !maps.Equal(got, b.files()) {
			t.Fatalf("after concurrent pulls a has %q, b has %q", got, b.files())
		}
	})
}
