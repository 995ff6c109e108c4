package server

import (
	"context"
	"fmt"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

func withCheckpoints(packs, retained int) agentOpt {
	return func(c *Config) { c.CheckpointPacks, c.RetainedCheckpoints = packs, retained }
}

// Once the active chain is CheckpointPacks long, a commit folds it into a
// checkpoint; new readers pull from it, the log still reads, and a
// directory whose baseline predates the checkpoint still merges (its base
// content comes from the older chain's cache).
func TestCheckpointKeepsEveryReaderWorking(t *testing.T) {
	store := memstore.New()
	a := newAgent(t, store, withCheckpoints(3, 1))
	stale := newAgent(t, store)
	a.pull()
	a.write("shared.md", "1\n2\n3\n4\n5\n6\n")
	a.commit("c1")
	stale.pull()
	for i := 2; i <= 4; i++ {
		a.write(fmt.Sprintf("f%d.md", i), fmt.Sprint(i, "\n"))
		if i == 4 {
			a.write("shared.md", "1\n2\n3\n4\n5\nsix by a\n")
		}
		a.commit(fmt.Sprint("c", i))
	}
	a.e.publishing.Background.Wait()
	// The checkpoint is registered; the next fold that LISTs copies it
	// into `current` (a writer alone LISTs once in eight commits):
	// another writer's first commit does.
	b := newAgent(t, store)
	b.pull()
	b.write("b.md", "b\n")
	b.commit("b")
	b.e.publishing.Background.Wait()
	a.pull()

	st, err := remote.Open(store, remote.Options{}).ReadCurrent(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Manifest.Checkpoint.IsGenesis() {
		t.Fatal("no checkpoint after the active chain reached CheckpointPacks")
	}
	gen := st.Generation()

	fresh := newAgent(t, store)
	if res := fresh.pull(); res.Generation != gen {
		t.Fatalf("fresh pull generation %d, want %d", res.Generation, gen)
	}
	equalMaps(t, "fresh reader", fresh.files(), a.files())
	entries, err := fresh.e.Log(context.Background(), 10)
	if err != nil || len(entries) < 2 || entries[0].Message != "b" || entries[1].Message != "c4" {
		t.Fatalf("log after checkpoint: %v %v", entries, err)
	}

	stale.write("shared.md", "one by stale\n2\n3\n4\n5\n6\n")
	stale.commit("stale edit")
	a.pull()
	if got := a.read("shared.md"); got != "one by stale\n2\n3\n4\n5\nsix by a\n" {
		t.Fatalf("merge across the checkpoint: %q", got)
	}
}
