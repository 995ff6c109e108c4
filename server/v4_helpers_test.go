package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/publish"
	"github.com/slivingdoc/slivingdoc/remote"
)

// Helpers of the format-4 tests: a writer outside the engine that
// publishes with package publish directly (as another binary of the
// fleet would), on a model clock, so a test can lay out a version-4
// store exactly: generations folded as groups, history in segments.

// stepClock is a model clock: Wait advances it and returns at once, so
// publish's waits cost no real time and no test depends on timing.
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func newStepClock() *stepClock { return &stepClock{t: time.UnixMilli(1_800_000_000_000)} }

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *stepClock) Wait(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
	return ctx.Err()
}

// v4Writer publishes by version 4 without an engine.
type v4Writer struct {
	t     *testing.T
	store remote.Store
	clock *stepClock
	pub   *publish.Publisher
}

func newV4Writer(t *testing.T, store remote.Store) *v4Writer {
	t.Helper()
	return newV4WriterKM(t, store, 0, 0) // publish's default window
}

// newV4WriterKM is newV4Writer with the window K, M (0: the defaults).
func newV4WriterKM(t *testing.T, store remote.Store, k, m int) *v4Writer {
	t.Helper()
	id, err := remote.EnsureStoreID(context.Background(), store)
	if err != nil {
		t.Fatal(err)
	}
	w := &v4Writer{t: t, store: store, clock: newStepClock()}
	w.pub, err = publish.New(store, publish.Options{Store: id, Clock: w.clock, CondEstimate: time.Millisecond, RTT: time.Millisecond, K: k, M: m,
		Objects: func(ctx context.Context, _ publish.State) (cas.Source, error) { return storeObjects(ctx, store) }})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// storeObjects reads every pack of the store (increments, checkpoints,
// groups, and the packs inside proposals) into one source: a test's
// stand-in for a writer's cache. A pack whose trees are stored as deltas
// (a v4 proposal or rollup) is read once the objects it is a delta of
// are held, so the packs are taken in passes until one adds nothing.
func storeObjects(ctx context.Context, store remote.Store) (cas.Source, error) {
	mem := cas.NewObjectSet()
	var packs []*cas.Pack
	for _, prefix := range []string{"packs/", remote.ProposalsPrefix} {
		objs, err := store.List(ctx, prefix)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			if strings.HasPrefix(o.Key, remote.RollupsPrefix) {
				continue
			}
			data, _, err := store.Get(ctx, o.Key)
			if err != nil {
				return nil, err
			}
			if prefix == remote.ProposalsPrefix {
				if _, data, err = remote.DecodeProposalV4(o.Key, data); err != nil {
					continue // a marker, or a version-3 registration
				}
			}
			p, err := cas.OpenPack(data)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", o.Key, err)
			}
			packs = append(packs, p.WithBases(mem))
		}
	}
	for len(packs) > 0 {
		var left []*cas.Pack
		for _, p := range packs {
			if slices.ContainsFunc(p.Bases(), func(id cas.ID) bool { _, err := mem.Get(id); return err != nil }) {
				left = append(left, p)
				continue
			}
			for _, id := range p.IDs() {
				ob, err := p.Get(id)
				if err != nil {
					return nil, err
				}
				if err := mem.Put(ob); err != nil {
					return nil, err
				}
			}
		}
		if len(left) == len(packs) {
			return nil, fmt.Errorf("%d packs are deltas of trees no pack holds: %w", len(left), cas.ErrMissingBase)
		}
		packs = left
	}
	return mem, nil
}

// change builds files (path -> content; "" removes the path) on a
// state's head, under publication id: the head commit and its pack.
func (w *v4Writer) change(ctx context.Context, head cas.ID, id, message string, files map[string]string) (publish.Change, error) {
	src, err := storeObjects(ctx, w.store)
	if err != nil {
		return publish.Change{}, err
	}
	var tree cas.ID
	if !head.IsZero() {
		o, err := src.Get(head)
		if err != nil {
			return publish.Change{}, err
		}
		c, err := cas.DecodeCommit(o)
		if err != nil {
			return publish.Change{}, err
		}
		tree = c.Tree
	}
	sink := cas.NewObjectSet()
	changes := map[string]cas.ID{}
	for p, content := range files {
		if content == "" {
			changes[p] = cas.ID{}
			continue
		}
		if changes[p], err = cas.WriteFile(sink, []byte(content)); err != nil {
			return publish.Change{}, err
		}
	}
	root, err := cas.UpdateTree(bothSources{sink, src}, sink, tree, changes)
	if err != nil {
		return publish.Change{}, err
	}
	commit := cas.EncodeCommit(cas.Commit{Tree: root, Parent: head, Publication: id, Time: w.clock.Now(), Message: []byte(message)})
	if err := sink.Put(commit); err != nil {
		return publish.Change{}, err
	}
	pw := cas.NewPackWriter()
	for _, oid := range sink.IDs() {
		o, _ := sink.Get(oid)
		if err := pw.Put(o); err != nil {
			return publish.Change{}, err
		}
	}
	pack, err := pw.Finish()
	return publish.Change{Head: commit.ID, Pack: pack}, err
}

// commit publishes files on whatever `current` is and returns the
// generation that accepted it.
func (w *v4Writer) commit(message string, files map[string]string) uint64 {
	w.t.Helper()
	return w.commitID(remote.NewUUIDv7(), message, files)
}

// commitID is commit under publication ID id.
func (w *v4Writer) commitID(id, message string, files map[string]string) uint64 {
	w.t.Helper()
	res, err := w.pub.Commit(context.Background(), id, func(ctx context.Context, st publish.State) (publish.Change, error) {
		return w.change(ctx, st.Head(), id, message, files)
	})
	if err != nil {
		w.t.Fatalf("v4 commit: %v", err)
	}
	return res.Generation
}

// register PUTs a proposal of files built on the state `current` holds
// now under id, without folding it: a writer that registered and died.
func (w *v4Writer) register(id, message string, files map[string]string) {
	w.t.Helper()
	ctx := context.Background()
	var gen uint64
	var head cas.ID
	data, _, err := w.store.Get(ctx, remote.CurrentKey)
	switch {
	case errors.Is(err, remote.ErrNotFound):
	case err != nil:
		w.t.Fatal(err)
	default:
		m4, old, err := remote.DecodeCurrent(data)
		if err != nil {
			w.t.Fatal(err)
		}
		if old != nil {
			gen, head = old.Generation, old.Head
		} else {
			gen, head = m4.Generation, m4.Head
		}
	}
	ch, err := w.change(ctx, head, id, message, files)
	if err != nil {
		w.t.Fatal(err)
	}
	d := remote.ProposalV4{Publication: id, Parent: gen, ParentHead: head, Head: ch.Head, Time: uint64(w.clock.Now().UnixMilli())}
	obj, err := remote.EncodeProposalV4(d, ch.Pack)
	if err != nil {
		w.t.Fatal(err)
	}
	if err := w.store.Put(ctx, d.Key(), obj); err != nil {
		w.t.Fatal(err)
	}
}

// orderedIDs returns n publication IDs that sort in the order given (the
// fold order among versions built on one generation), all after every
// ID made before the call.
func orderedIDs(n int) []string {
	base := remote.NewUUIDv7()
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%012x", base[:24], 0xf00000000000+i)
	}
	return out
}

// bothSources reads from a, then b.
type bothSources struct{ a, b cas.Source }

func (s bothSources) Get(id cas.ID) (cas.Object, error) {
	if o, err := s.a.Get(id); err == nil {
		return o, nil
	}
	return s.b.Get(id)
}

// currentV4 decodes the store's `current`, which must be version 4.
func currentV4(t *testing.T, store remote.Store) *remote.ManifestV4 {
	t.Helper()
	data, _, err := store.Get(context.Background(), remote.CurrentKey)
	if err != nil {
		t.Fatal(err)
	}
	m, _, err := remote.DecodeCurrent(data)
	if err != nil || m == nil {
		t.Fatalf("current is not version 4: %v", err)
	}
	return m
}

// proposalKeys returns the keys of the proposal versions in store, in
// fold order (generation built on, then ID): a writer alone registers one
// per commit, so the i-th is the pack of generation i+1.
func proposalKeys(t *testing.T, store remote.Store) []string {
	t.Helper()
	objs, err := store.List(context.Background(), remote.ProposalsPrefix)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range objs {
		if kind, _, _, _, _ := remote.ParseProposalEntry(o.Key); kind == remote.EntryProposal {
			keys = append(keys, o.Key)
		}
	}
	return keys
}
