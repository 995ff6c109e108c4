package remote_test

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

// registerProposal registers, on state, the proposal of pub adding path
// to state's tree, as a writer that lost a race does (§4B).
func registerProposal(t *testing.T, w groupWriter, state remote.State, path, pub string) {
	t.Helper()
	ctx := context.Background()
	files, _, err := w.filesOf(ctx, state)
	if err != nil {
		t.Fatal(err)
	}
	files = maps.Clone(files)
	files[path] = []byte(path + "\n")
	prop, err := packFiles(files, state.Head(), pub, time.Unix(1700000000, 0), []byte("add "+path))
	if err != nil {
		t.Fatal(err)
	}
	g := state.Generation()
	d := remote.ProposalDescriptor{Publication: pub, ParentGeneration: g, Parent: state.Head(), Head: prop.Head,
		Pack: remote.PackRef{Key: remote.IncrementKey(g+1, pub), Sum: cas.Sum(prop.Pack), Size: int64(len(prop.Pack))}}
	if err := w.nb.Store().Put(ctx, remote.ProposalKey(g, pub), remote.EncodeRegistration(d, prop.Pack)); err != nil {
		t.Fatal(err)
	}
}

// A group leader's write gets no reply; re-reading `current` shows it
// absent, so the leader writes again on the same state, under the same
// publication ID, with the members registered by then. The first write
// then lands, and the retry gets no reply either. Reading `current` now
// shows our publication accepted, but by the first write, with other
// members after it: the leader must report the state it read, accepted
// as a helper's member is (Included), not the retry's manifest, whose
// member generations name heads the notebook never accepted.
func TestLateGroupWriteIsReportedAsItLanded(t *testing.T) {
	ctx := context.Background()
	mem := memstore.New()
	store := &replaceHookStore{Mem: mem}
	seed := newGroupWriter(store)
	if _, err := seed.publish(ctx, "seed.md", nil); err != nil {
		t.Fatal(err)
	}
	first, err := seed.nb.ReadCurrent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m1, m2, m3 := remote.NewUUIDv7(), remote.NewUUIDv7(), remote.NewUUIDv7()
	registerProposal(t, seed, first, "m1.md", m1)
	registerProposal(t, seed, first, "m3.md", m3)

	leader := newGroupWriter(store)
	leader.nb = remote.Open(store, remote.Options{GroupCommit: true, Sleep: fastSleep, Contention: stuckMemory{}})
	late := memstore.Fault{Op: memstore.OpReplace, KeyPrefix: remote.CurrentKey, Late: true}
	mem.Inject(late, late)
	defer memstore.AssertFaultsFired(t, mem)
	store.n, store.before = 0, func(n int) {
		if n == 1 {
			// Meanwhile m1 and m3 gave up (their descriptors are gone)
			// and m2 registered: the retry's group is another.
			for _, pub := range []string{m1, m3} {
				if err := mem.Delete(ctx, remote.ProposalKey(1, pub)); err != nil {
					t.Error(err)
				}
			}
			registerProposal(t, seed, first, "m2.md", m2)
		}
	}
	acc, err := leader.publish(ctx, "leader.md", nil)
	if err != nil {
		t.Fatal(err)
	}
	if mem.Landed() != 1 || store.n != 2 {
		t.Fatalf("%d replaces, %d held writes landed; the script wanted the first landed and the retry's held", store.n, mem.Landed())
	}
	cur, err := remote.Open(mem, remote.Options{}).ReadCurrent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	incs, err := seed.nb.Publications(ctx, cur, 2, cur.Generation())
	if err != nil {
		t.Fatal(err)
	}
	if len(incs) != 3 || incs[0].Publication != acc.Publication || incs[1].Publication != m1 || incs[2].Publication != m3 {
		t.Fatalf("history after generation 1: %+v; want the first write (leader, m1, m3)", incs)
	}
	if !acc.Published || acc.Included != 2 || acc.Members != 0 {
		t.Fatalf("accepted %+v; want published, included at 2, no members of the retry", acc)
	}
	if acc.State.Generation() != cur.Generation() || acc.State.Head() != cur.Head() {
		t.Fatalf("reported generation %d head %s; `current` is %d %s", acc.State.Generation(), acc.State.Head(), cur.Generation(), cur.Head())
	}
	files := headFiles(t, mem)
	for _, p := range []string{"seed.md", "leader.md", "m1.md", "m3.md"} {
		if string(files[p]) != p+"\n" {
			t.Errorf("%s: %q", p, files[p])
		}
	}
	if _, ok := files["m2.md"]; ok {
		t.Error("m2.md, named only by the retry that never landed, is in the tree")
	}
}
