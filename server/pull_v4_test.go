package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/history"
	"github.com/slivingdoc/slivingdoc/server/pstate"
)

// killedV4Commit makes a commit of mine.md that registers its version
// and dies before it learns the outcome; it returns the call's ID.
func killedV4Commit(t *testing.T, store *memstore.Mem, a *agent) string {
	t.Helper()
	ctx := context.Background()
	before, _ := store.List(ctx, remote.ProposalsPrefix)
	a.write("mine.md", "mine\n")
	// The registration lands; the process dies before it learns so.
	store.Inject(memstore.Fault{Op: memstore.OpPut, KeyPrefix: remote.ProposalsPrefix, After: errors.New("the process died here")})
	if _, err := a.e.Commit(ctx, "", "mine"); err == nil {
		t.Fatal("the killed commit went through")
	}
	memstore.AssertFaultsFired(t, store)
	after, _ := store.List(ctx, remote.ProposalsPrefix)
	if len(after) != len(before)+1 {
		t.Fatalf("registered: %v", after)
	}
	_, _, id, _, _ := remote.ParseProposalEntry(after[len(after)-1].Key)
	return id
}

// pendingRecords lists the pending records under a private root.
func pendingRecords(t *testing.T, priv string) []string {
	t.Helper()
	got, err := filepath.Glob(filepath.Join(priv, "dirs", "*", "pending"))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// A pull after a commit that died once it had registered settles the
// call before the baseline moves on: the version is folded (by another
// writer before the pull, or by the pull itself), the pull reports and
// the directory holds the generation that accepted it, and nothing is
// left to publish.
func TestV4PullSettlesAnUndecidedCall(t *testing.T) {
	for _, folded := range []bool{false, true} {
		t.Run(fmt.Sprintf("foldedByAnother=%v", folded), func(t *testing.T) {
			ctx := context.Background()
			store := memstore.New()
			priv := t.TempDir()
			clock := newStepClock() // b takes over from the dead folder without real waiting
			model := func(c *Config) { c.Sleep, c.Now = clock.Wait, clock.Now }
			a := newAgent(t, store, model, func(c *Config) { c.PrivateRoot = priv })
			a.pull()
			a.write("seed.md", "seed\n")
			a.commit("seed") // 1
			id := killedV4Commit(t, store, a)
			want := map[string]string{"seed.md": "seed\n", "mine.md": "mine\n"}
			if folded {
				b := newAgent(t, store, model)
				b.pull()
				b.write("theirs.md", "theirs\n")
				b.commit("theirs")
				want["theirs.md"] = "theirs\n"
			}
			a.e.Close()
			a2 := newAgent(t, store, model, func(c *Config) { c.PrivateRoot, c.WorkspaceRoot, c.DefaultDir = priv, a.ws, a.dir })
			res := a2.pull()
			m := currentV4(t, store)
			at := m.AcceptedAt(id)
			if at == 0 || res.Generation != m.Generation {
				t.Fatalf("after the pull: accepted at %d, pull at %d, current %d", at, res.Generation, m.Generation)
			}
			if got := pendingRecords(t, priv); len(got) != 0 {
				t.Fatalf("pending records left: %v", got)
			}
			equalMaps(t, "directory", a2.files(), want)
			// Nothing left to publish: the directory is the accepted state.
			if again := a2.commit("nothing"); again.Generation != m.Generation {
				t.Fatalf("a commit right after the pull published generation %d", again.Generation)
			}
			// An edit next to the accepted line merges as a local change.
			a2.write("mine.md", "mine\nmore\n")
			a2.commit("more")
			log, err := a2.e.History(ctx, history.Query{Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			mine := 0
			for _, h := range log {
				if h.Message == "mine" {
					mine++
				}
			}
			if mine != 1 {
				t.Fatalf("the killed commit accepted %d times", mine)
			}
		})
	}
}

// A pull after a commit that died once it had registered, whose version
// was then declined (it conflicts with a version folded before it): the
// call is decided, never to be accepted. The pull publishes nothing,
// drops the record, and keeps the text in the directory, in a conflict
// block beside the accepted one; resolved, it commits.
func TestV4PullDropsADecidedCall(t *testing.T) {
	ctx := context.Background()
	store := memstore.New()
	priv := t.TempDir()
	// The engines' clock is the model's the writer outside them uses:
	// waiters time their reads from the `time` of the writes they read.
	clock := newStepClock()
	a := newAgent(t, store, func(c *Config) { c.PrivateRoot, c.Sleep, c.Now = priv, clock.Wait, clock.Now })
	a.pull()
	a.write("seed.md", "seed\n")
	a.write("mine.md", "base\n")
	a.commit("seed")          // 1
	first := orderedIDs(1)[0] // before the killed call's: first in the fold order
	id := killedV4Commit(t, store, a)
	w := newV4Writer(t, store)
	if g := w.commitID(first, "theirs", map[string]string{"mine.md": "theirs\n"}); g != 2 {
		t.Fatalf("theirs at %d", g)
	}
	m := currentV4(t, store)
	if m.Generation != 2 || !m.IsDeclined(1, id) {
		t.Fatalf("current %d, declined %+v", m.Generation, m.Declined)
	}
	a.e.Close()
	a2 := newAgent(t, store, func(c *Config) {
		c.PrivateRoot, c.WorkspaceRoot, c.DefaultDir, c.Sleep, c.Now = priv, a.ws, a.dir, clock.Wait, clock.Now
	})
	_, err := a2.e.Pull(ctx, "")
	domainErr(t, err, diag.CodeContentConflict, diag.ReasonMergeConflict)
	if got := currentV4(t, store); got.Generation != 2 || got.AcceptedAt(id) != 0 {
		t.Fatalf("the pull published: generation %d", got.Generation)
	}
	if got := pendingRecords(t, priv); len(got) != 0 {
		t.Fatalf("pending records left: %v", got)
	}
	text := a2.read("mine.md")
	if !strings.Contains(text, "mine\n") || !strings.Contains(text, "theirs\n") {
		t.Fatalf("mine.md after the pull: %q", text)
	}
	a2.write("mine.md", "theirs\nmine\n")
	if res := a2.commit("resolved"); res.Generation != 3 {
		t.Fatalf("resolved at %d", res.Generation)
	}
	reader := newAgent(t, store)
	reader.pull()
	equalMaps(t, "notebook", reader.files(), map[string]string{"seed.md": "seed\n", "mine.md": "theirs\nmine\n"})
}

// The pending record is written before its version is stored: a call
// that died in between names a newest version the store does not have,
// while an older one is still foldable. The pull finds that one and
// settles the call by it, instead of dropping a record whose text
// another writer's fold could still accept.
func TestV4PullSettlesByAnOlderVersionStillFoldable(t *testing.T) {
	store := memstore.New()
	priv := t.TempDir()
	clock := newStepClock()
	model := func(c *Config) { c.Sleep, c.Now = clock.Wait, clock.Now }
	a := newAgent(t, store, model, func(c *Config) { c.PrivateRoot = priv })
	a.pull()
	a.write("seed.md", "seed\n")
	a.commit("seed") // 1
	id := killedV4Commit(t, store, a)
	a.e.Close()
	// As if the dead call had gone on to build a version on generation 5
	// and died before storing it.
	recs := pendingRecords(t, priv)
	if len(recs) != 1 {
		t.Fatalf("pending records: %v", recs)
	}
	data, err := os.ReadFile(recs[0])
	if err != nil {
		t.Fatal(err)
	}
	var rec pstate.PendingRecord
	if err := json.Unmarshal(data, &rec); err != nil || len(rec.Entries) != 1 || rec.Entries[0].Last != 1 {
		t.Fatalf("record %s: %v", data, err)
	}
	rec.Entries[0].Last = 5
	if data, err = json.Marshal(rec); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(recs[0], data, 0o600); err != nil {
		t.Fatal(err)
	}
	a2 := newAgent(t, store, model, func(c *Config) { c.PrivateRoot, c.WorkspaceRoot, c.DefaultDir = priv, a.ws, a.dir })
	res := a2.pull()
	if m := currentV4(t, store); m.AcceptedAt(id) == 0 || res.Generation != m.Generation {
		t.Fatalf("after the pull: accepted at %d, pull at %d, current %d", m.AcceptedAt(id), res.Generation, m.Generation)
	}
	if got := pendingRecords(t, priv); len(got) != 0 {
		t.Fatalf("pending records left: %v", got)
	}
	equalMaps(t, "directory", a2.files(), map[string]string{"seed.md": "seed\n", "mine.md": "mine\n"})
}
