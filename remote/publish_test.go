package remote_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/remotetest"
)

// noSleep is an injected clock that records the backoff waits.
type noSleep struct{ waits []time.Duration }

func (s *noSleep) Sleep(ctx context.Context, d time.Duration) error {
	s.waits = append(s.waits, d)
	return ctx.Err()
}

// proposer is a build callback: each call proposes a new head whose pack is
// derived from the publication ID, and records what it observed.
type proposer struct {
	observed []remote.State
	pubs     []string
}

func (p *proposer) build(ctx context.Context, observed remote.State, pub string) (remote.Proposal, error) {
	p.observed = append(p.observed, observed)
	p.pubs = append(p.pubs, pub)
	return proposal(observed.Head(), pub), nil
}

// proposal returns a valid proposal: a real pack with a commit on parent
// made by pub.
func proposal(parent cas.ID, pub string) remote.Proposal {
	return remotetest.Proposal(parent, pub, []byte("test"))
}

func TestPublishFirstAndNext(t *testing.T) {
	ctx := context.Background()
	m := memstore.New()
	nb := remote.Open(m, remote.Options{})
	var p proposer

	acc, err := nb.Publish(ctx, p.build)
	if err != nil {
		t.Fatal(err)
	}
	if !acc.Published || acc.Attempts != 1 || acc.State.Generation() != 1 || acc.Publication != p.pubs[0] {
		t.Fatalf("first publication: %+v", acc)
	}
	if p.observed[0].Generation() != 0 || p.observed[0].Manifest != nil || p.observed[0].ETag != "" {
		t.Fatalf("build observed %+v, want the empty notebook", p.observed[0])
	}
	// The uncontended floor: one GET, one PUT of the pack, one conditional write.
	if g, w := m.Calls(memstore.OpGet), m.Calls(memstore.OpPut)+m.Calls(memstore.OpCreate)+m.Calls(memstore.OpReplace); g != 1 || w != 2 {
		t.Fatalf("first publication used %d GETs and %d writes, want 1 and 2", g, w)
	}

	acc2, err := nb.Publish(ctx, p.build)
	if err != nil {
		t.Fatal(err)
	}
	if acc2.State.Generation() != 2 || p.observed[1].Head() != acc.State.Head() {
		t.Fatalf("second publication: %+v built on %v", acc2, p.observed[1].Head())
	}
	// What Publish reports is what a fresh reader sees.
	cur, err := nb.ReadCurrent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cur.ETag != acc2.State.ETag || cur.Head() != acc2.State.Head() || cur.Generation() != 2 {
		t.Fatalf("current = gen %d etag %s; Publish said gen 2 etag %s", cur.Generation(), cur.ETag, acc2.State.ETag)
	}
	inc := cur.Manifest.Increments[1]
	if inc.Parent != acc.State.Head() || inc.Publication != acc2.Publication {
		t.Fatalf("increment 2 = %+v", inc)
	}
	// Every pack the manifest names is present and verifies.
	for _, ref := range cur.Manifest.Packs() {
		data, err := nb.FetchPack(ctx, ref)
		if err != nil {
			t.Fatalf("FetchPack(%s): %v", ref.Key, err)
		}
		if want := proposal(inc.Parent, inc.Publication).Pack; ref == inc.Pack && !bytes.Equal(data, want) {
			t.Fatalf("pack %s does not hold the proposed bytes", ref.Key)
		}
	}
}

func TestPublishSkip(t *testing.T) {
	ctx := context.Background()
	m := memstore.New()
	nb := remote.Open(m, remote.Options{})
	var p proposer
	if _, err := nb.Publish(ctx, p.build); err != nil {
		t.Fatal(err)
	}
	before := m.Calls(memstore.OpPut) + m.Calls(memstore.OpReplace)
	acc, err := nb.Publish(ctx, func(ctx context.Context, observed remote.State, pub string) (remote.Proposal, error) {
		return remote.Proposal{Skip: true}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if acc.Published || acc.Publication != "" || acc.State.Generation() != 1 {
		t.Fatalf("Skip: %+v", acc)
	}
	if after := m.Calls(memstore.OpPut) + m.Calls(memstore.OpReplace); after != before {
		t.Fatal("a skipped publication wrote to the store")
	}
}

func TestPublishBuildErrorUnchanged(t *testing.T) {
	errMine := errors.New("merge refused")
	nb := remote.Open(memstore.New(), remote.Options{})
	_, err := nb.Publish(context.Background(), func(context.Context, remote.State, string) (remote.Proposal, error) {
		return remote.Proposal{}, errMine
	})
	if err != errMine {
		t.Fatalf("Publish = %v, want the build error itself", err)
	}
}

func TestPublishRefusesBadProposal(t *testing.T) {
	ctx := context.Background()
	m := memstore.New()
	nb := remote.Open(m, remote.Options{})
	var p proposer
	first, err := nb.Publish(ctx, p.build)
	if err != nil {
		t.Fatal(err)
	}
	good := proposal(first.State.Head(), "")
	for name, mk := range map[string]func(observed remote.State, pub string) remote.Proposal{
		"no pack": func(o remote.State, pub string) remote.Proposal {
			return remote.Proposal{Head: proposal(o.Head(), pub).Head}
		},
		"no head": func(o remote.State, pub string) remote.Proposal {
			return remote.Proposal{Pack: proposal(o.Head(), pub).Pack}
		},
		"not a pack": func(o remote.State, pub string) remote.Proposal {
			return remote.Proposal{Pack: []byte("x"), Head: proposal(o.Head(), pub).Head}
		},
		"head not in it": func(o remote.State, pub string) remote.Proposal {
			return remote.Proposal{Pack: good.Pack, Head: proposal(o.Head(), pub).Head}
		},
		"head not a commit": func(o remote.State, pub string) remote.Proposal {
			w := cas.NewPackWriter()
			obj, _ := cas.ChunkObject([]byte("chunk"))
			_ = w.Put(obj)
			pack, _ := w.Finish()
			return remote.Proposal{Pack: pack, Head: obj.ID}
		},
		"wrong parent":      func(o remote.State, pub string) remote.Proposal { return proposal(cas.ID{}, pub) },
		"wrong publication": func(o remote.State, pub string) remote.Proposal { return proposal(o.Head(), remote.NewUUIDv7()) },
	} {
		_, err := nb.Publish(ctx, func(_ context.Context, o remote.State, pub string) (remote.Proposal, error) { return mk(o, pub), nil })
		if !errors.Is(err, remote.ErrInvalidProposal) {
			t.Errorf("%s: Publish = %v, want ErrInvalidProposal", name, err)
		}
	}
	if m.Calls(memstore.OpPut) != 1 {
		t.Fatal("an invalid proposal was uploaded")
	}
	if cur, _ := nb.ReadCurrent(ctx); cur.Generation() != 1 {
		t.Fatalf("a refused proposal changed current to generation %d", cur.Generation())
	}
}

func TestPublishGenerationOverflow(t *testing.T) {
	ctx := context.Background()
	m := memstore.New()
	nb := remote.Open(m, remote.Options{})
	// A valid manifest at the last generation: the checkpoint covers
	// everything, nothing is active after it.
	head := cas.Sum([]byte("last"))
	pub := pubs[0]
	top := &remote.Manifest{
		Generation: 1<<64 - 1,
		Head:       head,
		Checkpoint: remote.Checkpoint{
			Pack:        remote.PackRef{Key: remote.CheckpointKey(1<<64-1, pub), Sum: cas.Sum([]byte("cp")), Size: 2},
			Head:        head,
			Through:     1<<64 - 1,
			Publication: pub,
		},
	}
	data, err := remote.EncodeManifest(top)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.CreateIfAbsent(ctx, remote.CurrentKey, data); err != nil {
		t.Fatal(err)
	}
	var p proposer
	if _, err := nb.Publish(ctx, p.build); !errors.Is(err, remote.ErrGenerationOverflow) {
		t.Fatalf("Publish at the last generation = %v, want ErrGenerationOverflow", err)
	}
	if objs, _ := m.List(ctx, remote.IncrementsPrefix); len(objs) != 0 {
		t.Fatal("a refused publication uploaded a pack")
	}
}
