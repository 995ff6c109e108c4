package server

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

// Two writers reach the conditional replace of `current` together: one
// wins, the other loses the race and is accepted all the same, with its
// change merged onto the winner's: the winner's fold took its proposal
// too, or it folds again on the new state (a third replace). Nothing is
// reported as failed, no line is lost, and each commit has a generation
// of its own.
func TestLostRaceReMerges(t *testing.T) {
	store := memstore.New()
	a, b := newAgent(t, store), newAgent(t, store)
	a.pull()
	a.write("shared.md", "top\n\nmiddle\n\nbottom\n")
	a.commit("base")
	b.pull()
	a.write("shared.md", "top edited by a\n\nmiddle\n\nbottom\n")
	b.write("shared.md", "top\n\nmiddle\n\nbottom edited by b\n")
	b.write("b-only.md", "b\n")

	barrier := memstore.NewBarrier(2)
	store.Inject(
		memstore.Fault{Op: memstore.OpReplace, KeyPrefix: "current", Barrier: barrier},
		memstore.Fault{Op: memstore.OpReplace, KeyPrefix: "current", Barrier: barrier},
	)
	replaces := store.Calls(memstore.OpReplace)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, ag := range []*agent{a, b} {
		wg.Go(func() { _, errs[i] = ag.e.Commit(context.Background(), "", "concurrent") })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("commit: %v", err)
		}
	}
	if left := store.Unfired(); len(left) != 0 {
		t.Fatalf("faults not exercised: %v", left)
	}
	if got := store.Calls(memstore.OpReplace) - replaces; got != 2 && got != 3 {
		t.Fatalf("%d conditional replaces, want 2 or 3 (two racing, perhaps one folded again)", got)
	}
	want := map[string]string{"shared.md": "top edited by a\n\nmiddle\n\nbottom edited by b\n", "b-only.md": "b\n"}
	for _, ag := range []*agent{a, b} {
		if res := ag.pull(); res.Generation != 3 {
			t.Fatalf("generation %d, want 3", res.Generation)
		}
		equalMaps(t, "after the race", ag.files(), want)
	}
}

// Many writers on disjoint files, each in its own directory and private
// root: every line is present at the end and the generation counts every
// publication.
func TestConcurrentWritersDisjointFiles(t *testing.T) {
	for name, store := range stores(t) {
		t.Run(name, func(t *testing.T) { concurrentWriters(t, store) })
	}
}

func concurrentWriters(t *testing.T, store remote.Store) {
	const writers, commits = 5, 4
	agents := make([]*agent, writers)
	for i := range agents {
		agents[i] = newAgent(t, store)
		agents[i].pull()
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers*commits)
	for i, ag := range agents {
		wg.Go(func() {
			name := fmt.Sprintf("w%d.md", i)
			for c := range commits {
				line := fmt.Sprintf("writer %d line %d\n", i, c)
				if c == 0 {
					ag.write(name, line)
				} else {
					ag.appendTo(name, line)
				}
				if _, err := ag.e.Commit(context.Background(), "", line); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("commit: %v", err)
	}
	check := newAgent(t, store)
	if res := check.pull(); res.Generation != writers*commits {
		t.Fatalf("generation %d, want %d", res.Generation, writers*commits)
	}
	files := check.files()
	for i := range writers {
		got := files[fmt.Sprintf("w%d.md", i)]
		for c := range commits {
			if !strings.Contains(got, fmt.Sprintf("writer %d line %d\n", i, c)) {
				t.Fatalf("writer %d line %d lost: %q", i, c, got)
			}
		}
	}
}

// Calls on one directory from one engine are serialised: concurrent
// commits of the same directory never interleave their rewrites.
func TestSameDirectorySerialised(t *testing.T) {
	store := memstore.New()
	a := newAgent(t, store)
	a.pull()
	a.write("f.md", "x\n")
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			if i%2 == 0 {
				_, errs[i] = a.e.Commit(context.Background(), "", "c")
			} else {
				_, errs[i] = a.e.Pull(context.Background(), "")
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	b := newAgent(t, store)
	if res := b.pull(); res.Generation != 1 {
		t.Fatalf("generation %d, want exactly one publication", res.Generation)
	}
}
