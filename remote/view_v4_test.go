package remote_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/remotetest"
)

// v4Store holds a version-4 `current` of one generation, whose proposal
// is in the store, and returns the proposal's pack.
func v4Store(t *testing.T) (*memstore.Mem, remote.IncrementV4, []byte) {
	t.Helper()
	ctx := context.Background()
	store := memstore.New()
	id, err := remote.EnsureStoreID(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	pub := remote.NewUUIDv7()
	prop := wholeProposal(t, pub)
	d := remote.ProposalV4{Publication: pub, Parent: 0, Head: prop.Head, Time: 1700000000000}
	obj, err := remote.EncodeProposalV4(d, prop.Pack)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Put(ctx, d.Key(), obj); err != nil {
		t.Fatal(err)
	}
	m, _, err := remote.NextV4(nil, id, 1700000000001, []remote.MemberV4{{Publication: pub, Proposal: 0, Head: prop.Head, Time: d.Time}}, remote.GroupRef{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	data, err := remote.EncodeManifestV4(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.CreateIfAbsent(ctx, remote.CurrentKey, data); err != nil {
		t.Fatal(err)
	}
	return store, m.Increments[0], prop.Pack
}

// ReadCurrent returns a version-4 `current` as its read-only view: the
// generation's proposal is its pack (FetchPack returns the pack inside
// it, checked against its descriptor), and every version-3 writer
// refuses to write over it.
func TestReadCurrentViewsVersion4(t *testing.T) {
	ctx := context.Background()
	store, inc, pack := v4Store(t)
	n := remote.Open(store, remote.Options{})
	st, err := n.ReadCurrent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m := st.Manifest
	if m.Version != 4 || m.V4 == nil || m.Generation != 1 || m.Head != inc.Head || len(m.Increments) != 1 {
		t.Fatalf("view: %+v", m)
	}
	got := m.Increments[0]
	if got.Publication != inc.Publication || got.Pack.Key != inc.ProposalKey() || got.Group != (remote.PackRef{}) {
		t.Fatalf("increment: %+v", got)
	}
	data, err := n.FetchPack(ctx, got.Pack)
	if err != nil || string(data) != string(pack) {
		t.Fatalf("fetch the proposal's pack: %v", err)
	}
	incs, err := n.Publications(ctx, st, 1, 1)
	if err != nil || len(incs) != 1 || incs[0].Head != inc.Head {
		t.Fatalf("publications: %+v %v", incs, err)
	}

	// A proposal whose pack is not what its descriptor says.
	obj, _, _ := store.Get(ctx, inc.ProposalKey())
	obj[len(obj)-1] ^= 1
	if err := store.Put(ctx, inc.ProposalKey(), obj); err != nil {
		t.Fatal(err)
	}
	if _, err := n.FetchPack(ctx, got.Pack); !errors.Is(err, remote.ErrCorruptPack) {
		t.Fatalf("a damaged proposal: %v", err)
	}

	if _, err := m.Extend(remote.NewUUIDv7(), cas.Sum([]byte("x")), remote.PackRef{}); !errors.Is(err, remote.ErrV4Store) {
		t.Fatalf("Extend over a view: %v", err)
	}
	if _, err := m.SwapCheckpoint(remote.Checkpoint{}, 0); !errors.Is(err, remote.ErrV4Store) {
		t.Fatalf("SwapCheckpoint over a view: %v", err)
	}
	if _, err := remote.EncodeManifest(m); !errors.Is(err, remote.ErrV4Store) {
		t.Fatalf("EncodeManifest of a view: %v", err)
	}
	// Cleanup knows neither proposals nor group packs: it deletes
	// nothing of a version-4 store.
	stale := remote.IncrementKey(1, remote.NewUUIDv7())
	if err := store.Put(ctx, stale, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Cleanup(ctx, 1); !errors.Is(err, remote.ErrV4Store) {
		t.Fatalf("Cleanup of a v4 store: %v", err)
	}
	if _, _, err := store.Get(ctx, stale); err != nil {
		t.Fatalf("cleanup deleted %s: %v", stale, err)
	}
}

// A group pack is listed once per chain, after the first increment
// naming it.
func TestChainPacksListAGroupOnce(t *testing.T) {
	g := remote.PackRef{Key: remote.GroupPackKeyV4(cas.Sum([]byte("g"))), Sum: cas.Sum([]byte("g")), Size: 1}
	c := remote.Chain{Increments: []remote.Increment{
		{Generation: 1, Pack: remote.PackRef{Key: "a"}, Group: g},
		{Generation: 2, Pack: remote.PackRef{Key: "b"}, Group: g},
		{Generation: 3, Pack: remote.PackRef{Key: "c"}},
	}}
	var keys []string
	for _, p := range c.Packs() {
		keys = append(keys, p.Key)
	}
	if want := []string{"a", g.Key, "b", "c"}; !slices.Equal(keys, want) {
		t.Fatalf("packs: %v", keys)
	}
}

// Verify reads a version-4 store, and a proposal built on a generation
// above `current`'s (`current` restored from an older copy) is reported.
func TestVerifyVersion4(t *testing.T) {
	ctx := context.Background()
	store, _, _ := v4Store(t)
	rep, err := remote.Verify(ctx, store, remote.VerifyOptions{})
	if err != nil || !rep.OK() || rep.Generation != 1 || rep.Packs != 1 {
		t.Fatalf("verify: %+v %v", rep, err)
	}
	pub := remote.NewUUIDv7()
	prop := remotetest.Proposal(cas.Sum([]byte("head of 5")), pub, []byte("later"))
	d := remote.ProposalV4{Publication: pub, Parent: 5, ParentHead: cas.Sum([]byte("head of 5")), Head: prop.Head, Time: 1700000000002}
	obj, err := remote.EncodeProposalV4(d, prop.Pack)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Put(ctx, d.Key(), obj); err != nil {
		t.Fatal(err)
	}
	rep, err = remote.Verify(ctx, store, remote.VerifyOptions{})
	if err != nil || len(rep.Findings) != 1 || rep.Findings[0].Code != remote.FindingGenerationRegress || rep.Findings[0].Key != d.Key() {
		t.Fatalf("verify: %+v %v", rep, err)
	}
	// So is a checkpoint registered for a generation above `current`'s
	// (a fold would take a rollup so registered once the notebook
	// reaches its generation again, with another history's objects).
	if err := store.Delete(ctx, d.Key()); err != nil {
		t.Fatal(err)
	}
	cpPub := remote.NewUUIDv7()
	cp := remote.Checkpoint{Pack: remote.PackRef{Key: remote.CheckpointKey(4, cpPub), Sum: cas.Sum([]byte("cp")), Size: 2}, Head: cas.Sum([]byte("head of 4")), Through: 4, Publication: cpPub}
	key, data, err := remote.EncodeRegistered(remote.Registered{Kind: remote.EntryCheckpoint, Checkpoint: cp})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Put(ctx, key, data); err != nil {
		t.Fatal(err)
	}
	rep, err = remote.Verify(ctx, store, remote.VerifyOptions{})
	if err != nil || len(rep.Findings) != 1 || rep.Findings[0].Code != remote.FindingGenerationRegress || rep.Findings[0].Key != key {
		t.Fatalf("verify of a registration above current: %+v %v", rep, err)
	}
}

// wholeProposal is a proposal of one file on the empty notebook whose
// pack holds its head's whole closure (remotetest.Proposal's tree is a
// placeholder, which verify's closure walk would report).
func wholeProposal(t *testing.T, pub string) remote.Proposal {
	t.Helper()
	mem := cas.NewObjectSet()
	fid, err := cas.WriteFile(mem, []byte("one\n"))
	if err != nil {
		t.Fatal(err)
	}
	tree, err := cas.WriteTree(mem, map[string]cas.ID{"a.md": fid})
	if err != nil {
		t.Fatal(err)
	}
	commit := cas.EncodeCommit(cas.Commit{Tree: tree, Publication: pub, Time: time.Unix(1700000000, 0), Message: []byte("first")})
	if err := mem.Put(commit); err != nil {
		t.Fatal(err)
	}
	w := cas.NewPackWriter()
	for _, id := range mem.IDs() {
		o, _ := mem.Get(id)
		if err := w.Put(o); err != nil {
			t.Fatal(err)
		}
	}
	pack, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return remote.Proposal{Pack: pack, Head: commit.ID}
}
