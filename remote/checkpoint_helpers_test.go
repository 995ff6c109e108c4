package remote_test

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/remote"
)

// treeWriter commits real trees the way the engine does: it reads the
// observed head's files from the active chain's packs, applies an edit,
// and packs only the objects the chain does not hold yet. Checkpoint,
// cleanup and verify tests need commits whose closures mean something.
type treeWriter struct {
	nb    *remote.Notebook
	mu    sync.Mutex
	packs map[string]*cas.Pack // downloaded packs by key
	// skipHave, when set, is consulted instead of the chain for "does the
	// chain hold this object": a test can make a writer rely on objects
	// outside the active chain, as a writer with an older cache would.
	skipHave func(cas.ID) bool
	// carry makes the writer's packs carry the segments their folds
	// create (Manifest.Carried), as the engine's do.
	carry bool
}

func newTreeWriter(store remote.Store) *treeWriter {
	return &treeWriter{nb: remote.Open(store, remote.Options{Sleep: fastSleep}), packs: map[string]*cas.Pack{}}
}

// fastSleep keeps lost-race backoffs short and real (concurrent tests need
// writers to spread out a little).
func fastSleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d / 25)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// chainPacks returns the opened packs of state's active chain and the IDs
// they hold.
func (w *treeWriter) chainPacks(ctx context.Context, state remote.State) (chainSource, error) {
	var src chainSource
	src.ids = map[cas.ID]bool{}
	if state.Manifest == nil {
		return src, nil
	}
	chains, err := w.nb.Chains(ctx, state)
	if err != nil {
		return src, err
	}
	for _, ref := range chains[0].Packs() {
		w.mu.Lock()
		p := w.packs[ref.Key]
		w.mu.Unlock()
		if p == nil {
			data, err := w.nb.FetchPack(ctx, ref)
			if err != nil {
				return src, err
			}
			if p, err = cas.OpenPack(data); err != nil {
				return src, err
			}
			w.mu.Lock()
			w.packs[ref.Key] = p
			w.mu.Unlock()
		}
		src.packs = append(src.packs, p)
		for _, id := range p.IDs() {
			src.ids[id] = true
		}
	}
	return src, nil
}

type chainSource struct {
	packs []*cas.Pack
	ids   map[cas.ID]bool
}

func (s chainSource) Get(id cas.ID) (cas.Object, error) {
	for _, p := range s.packs {
		if o, err := p.Get(id); err == nil {
			return o, nil
		}
	}
	return cas.Object{}, cas.ErrNotFound
}

// files reads every file of commit head.
func readFiles(src cas.Source, head cas.ID) (map[string][]byte, error) {
	out := map[string][]byte{}
	if head.IsZero() {
		return out, nil
	}
	o, err := src.Get(head)
	if err != nil {
		return nil, err
	}
	c, err := cas.DecodeCommit(o)
	if err != nil {
		return nil, err
	}
	ids, err := cas.ReadTree(src, c.Tree)
	if err != nil {
		return nil, err
	}
	for p, id := range ids {
		if out[p], err = cas.ReadFile(src, id); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// haveFilter is a Sink that drops objects the chain holds.
type haveFilter struct {
	have func(cas.ID) bool
	pw   *cas.PackWriter
}

func (f haveFilter) Put(o cas.Object) error {
	if f.have(o.ID) {
		return nil
	}
	return f.pw.Put(o)
}

// commit publishes edit applied to the accepted files.
func (w *treeWriter) commit(ctx context.Context, msg string, edit func(files map[string][]byte)) (remote.Accepted, error) {
	return w.nb.Publish(ctx, func(ctx context.Context, observed remote.State, pub string) (remote.Proposal, error) {
		src, err := w.chainPacks(ctx, observed)
		if err != nil {
			return remote.Proposal{}, err
		}
		files, err := readFiles(src, observed.Head())
		if err != nil {
			return remote.Proposal{}, err
		}
		files = maps.Clone(files)
		edit(files)
		have := func(id cas.ID) bool { return src.ids[id] }
		if w.skipHave != nil {
			have = w.skipHave
		}
		sink := haveFilter{have: have, pw: cas.NewPackWriter()}
		ids := map[string]cas.ID{}
		for p, content := range files {
			if ids[p], err = cas.WriteFile(sink, content); err != nil {
				return remote.Proposal{}, err
			}
		}
		tree, err := cas.WriteTree(sink, ids)
		if err != nil {
			return remote.Proposal{}, err
		}
		commit := cas.EncodeCommit(cas.Commit{Tree: tree, Parent: observed.Head(), Publication: pub, Time: time.Unix(1700000000, 0), Message: []byte(msg)})
		if err := sink.pw.Put(commit); err != nil {
			return remote.Proposal{}, err
		}
		if w.carry {
			for _, o := range observed.Manifest.Carried(pub) {
				if err := sink.pw.Put(o); err != nil {
					return remote.Proposal{}, err
				}
			}
		}
		pack, err := sink.pw.Finish()
		if err != nil {
			return remote.Proposal{}, err
		}
		return remote.Proposal{Pack: pack, Head: commit.ID}, nil
	})
}

// mustCommit sets path to content.
func (w *treeWriter) mustCommit(t testing.TB, path, content string) remote.Accepted {
	t.Helper()
	acc, err := w.commit(context.Background(), "set "+path, func(f map[string][]byte) { f[path] = []byte(content) })
	if err != nil {
		t.Fatalf("commit %s: %v", path, err)
	}
	return acc
}

// commitN makes n commits, each appending a line to one of a few files.
func (w *treeWriter) commitN(t testing.TB, n int) {
	t.Helper()
	for i := range n {
		_, err := w.commit(context.Background(), fmt.Sprint("commit ", i), func(f map[string][]byte) {
			p := fmt.Sprintf("notes/%d.md", i%4)
			f[p] = append(f[p], fmt.Sprintf("line %d\n", i)...)
		})
		if err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
	}
}

// chainsNow returns the chains of `current` as version 1 would list them
// (active first), read through the segments.
func chainsNow(t testing.TB, nb *remote.Notebook) (remote.State, []remote.Chain) {
	t.Helper()
	st, err := nb.ReadCurrent(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	chains, err := nb.Chains(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	return st, chains
}

// mustVerify fails the test unless Verify finds the store whole.
func mustVerify(t testing.TB, store remote.Store) *remote.Report {
	t.Helper()
	rep, err := remote.Verify(context.Background(), store, remote.VerifyOptions{})
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if !rep.OK() {
		t.Fatalf("Verify found problems: %+v", rep.Findings)
	}
	return rep
}

// packKeys lists the keys under prefix.
func packKeys(t testing.TB, store remote.Store, prefix string) []string {
	t.Helper()
	objs, err := store.List(context.Background(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range objs {
		out = append(out, o.Key)
	}
	return out
}

// headFiles reads the accepted files through the active chain only, as a
// fresh reader would.
func headFiles(t testing.TB, store remote.Store) map[string][]byte {
	t.Helper()
	w := newTreeWriter(store)
	state, err := w.nb.ReadCurrent(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	src, err := w.chainPacks(context.Background(), state)
	if err != nil {
		t.Fatal(err)
	}
	files, err := readFiles(src, state.Head())
	if err != nil {
		t.Fatalf("reading the head from the active chain alone: %v", err)
	}
	return files
}
