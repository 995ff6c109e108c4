package bench

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
)

// BenchmarkTreeDeltaBytes measures what storing directory trees as their
// change from another tree (cas pack version 2, docs/format.md 4.8) would
// give on the load generator's second bytes row: 1,000 notes of 2 KB in
// ten directories of 100, committed at once, then 200 one-line commits to
// notes picked as the load generator picks them (the same note text). It
// builds the history's objects as the engine does (cas.UpdateTree) and
// packs them twice: as today (Put) and with trees as deltas (PutDelta)
// against the parent's trees for the increments, and against the trees at
// a block's start for the rollups of levels 2..7, each packed as
// remote's rollup builder does (the end commit and what its tree reaches
// that the start's does not). The delta increments go through a real
// cas.Store, which verifies each one and reports each base's depth; the
// same history in today's packs goes into a second store, and both time
// ReadTree of the head, which pays for the chains. It was written before
// any writer used deltas; format-v4 writers now do, and
// BenchmarkV4StoreBytes measures what they store.
//
//	go test -run '^$' -bench TreeDeltaBytes -benchtime 1x ./bench
func BenchmarkTreeDeltaBytes(b *testing.B) {
	for range b.N {
		r := measureTreeDeltas(b)
		kib := func(n int) float64 { return float64(n) / 1024 }
		b.ReportMetric(kib(r.first), "first-KiB")
		b.ReportMetric(kib(r.incWhole), "incr-KiB")
		b.ReportMetric(kib(r.incDelta), "incr-delta-KiB")
		b.Logf("first commit: %.0f KiB; 200 increments: %.0f KiB whole, %.0f KiB with tree deltas (%.2f and %.2f KiB each)",
			kib(r.first), kib(r.incWhole), kib(r.incDelta), kib(r.incWhole)/200, kib(r.incDelta)/200)
		var rw, rd int
		var levels strings.Builder
		for l := 2; l <= 7; l++ {
			fmt.Fprintf(&levels, " L%d %d blocks %.0f/%.0f KiB (first block %.0f);", l, r.blocks[l], kib(r.rollWhole[l]), kib(r.rollDelta[l]), kib(r.firstBlock[l]))
			rw += r.rollWhole[l]
			rd += r.rollDelta[l]
		}
		b.Logf("rollups after the first block, whole/with tree deltas:%s", levels.String())
		kept := r.firstBlock[7] // the newest first block, the only one kept
		b.Logf("rollups of levels 2..7 after their first blocks: %.0f KiB whole, %.0f KiB with deltas; kept first block (level 7) %.0f KiB",
			kib(rw), kib(rd), kib(kept))
		b.Logf("row total (first commit, increments, rollups, kept first block): %.0f KiB today's way, %.0f KiB with tree deltas",
			kib(r.first+r.incWhole+rw+kept), kib(r.first+r.incDelta+rd+kept))
		b.Logf("the kept first block as its change from generation 1 (2..128, tree deltas): %.0f KiB; row total then %.0f KiB",
			kib(r.keptFrom1), kib(r.first+r.incDelta+rd+r.keptFrom1))
		b.Logf("ReadTree of the head (11 trees, chains up to %d deltas): %v from today's packs, %v through the deltas (median of 101)",
			r.maxDepth, r.readWhole, r.readDelta)
		b.ReportMetric(kib(rw), "rollups-KiB")
		b.ReportMetric(kib(rd), "rollups-delta-KiB")
	}
}

type treeDeltaRow struct {
	first, incWhole, incDelta int
	blocks                    [8]int
	rollWhole, rollDelta      [8]int // blocks after the first, by level
	firstBlock                [8]int
	keptFrom1                 int // the level-7 first block without what generation 1 holds
	readWhole, readDelta      time.Duration
	maxDepth                  int // the deepest chain among the head's trees
}

// timeReadTree returns the median time of ReadTree(root) from s.
func timeReadTree(b *testing.B, s *cas.Store, root cas.ID) time.Duration {
	var times []time.Duration
	for range 101 {
		start := time.Now()
		if _, err := cas.ReadTree(s, root); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(start))
	}
	slices.Sort(times)
	return times[len(times)/2]
}

func measureTreeDeltas(b *testing.B) treeDeltaRow {
	const files, commits, size = 1000, 200, 2048
	var r treeDeltaRow
	objs := cas.NewObjectSet() // every object of the history
	store, err := cas.OpenStore(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	wholeStore, err := cas.OpenStore(b.TempDir()) // the same history, today's packs
	if err != nil {
		b.Fatal(err)
	}
	defer wholeStore.Close()
	names := make([]string, files)
	flat := make(map[string]cas.ID, files)
	for i := range files {
		names[i] = fmt.Sprintf("d%03d/note-%05d.md", i/100, i)
		id, err := cas.WriteFile(objs, NoteText(i, size))
		if err != nil {
			b.Fatal(err)
		}
		flat[names[i]] = id
	}
	content := func(id cas.ID) []byte {
		c, err := cas.ReadFile(objs, id)
		if err != nil {
			b.Fatal(err)
		}
		return c
	}
	// heads[g] is the commit of generation g: 1 is the first commit.
	heads := []cas.ID{{}}
	commit := func(tree cas.ID, g int) cas.Object {
		o := cas.EncodeCommit(cas.Commit{
			Tree:        tree,
			Parent:      heads[g-1],
			Time:        time.Date(2026, 12, 6, 9, 0, g, 0, time.UTC),
			Publication: fmt.Sprintf("0193%04x-0000-7000-8000-%012x", g, g),
			Message:     []byte(fmt.Sprintf("line %d", g-1)),
		})
		if err := objs.Put(o); err != nil {
			b.Fatal(err)
		}
		heads = append(heads, o.ID)
		return o
	}
	root, err := cas.WriteTree(objs, flat)
	if err != nil {
		b.Fatal(err)
	}
	first := cas.NewPackWriter()
	c := commit(root, 1)
	putClosure(b, objs, first, c, cas.Object{}, nil, nil)
	data := finishPack(b, first)
	r.first = len(data)
	if err := store.AddPack("1.pack", data); err != nil {
		b.Fatal(err)
	}
	if err := wholeStore.AddPack("1.pack", data); err != nil {
		b.Fatal(err)
	}

	for i := range commits {
		g := i + 2
		name := names[(i*7919)%len(names)]
		words := strings.TrimSpace(strings.ReplaceAll(string(NoteText(-1-i, 40)), "\n", " "))
		line := fmt.Sprintf("- one-line commit %d: %s\n", i+1, words)
		id, err := cas.WriteFile(objs, append(content(flat[name]), line...))
		if err != nil {
			b.Fatal(err)
		}
		flat[name] = id
		tree, err := cas.UpdateTree(objs, objs, root, map[string]cas.ID{name: id})
		if err != nil {
			b.Fatal(err)
		}
		parent := mustGet(b, objs, heads[g-1])
		c := commit(tree, g)
		whole, delta := cas.NewPackWriter(), cas.NewPackWriter()
		putClosure(b, objs, whole, c, parent, nil, nil)
		putClosure(b, objs, delta, c, parent, objs, store)
		wholeData := finishPack(b, whole)
		r.incWhole += len(wholeData)
		if err := wholeStore.AddPack(fmt.Sprintf("%d.pack", g), wholeData); err != nil {
			b.Fatal(err)
		}
		data := finishPack(b, delta)
		r.incDelta += len(data)
		if err := store.AddPack(fmt.Sprintf("%d.pack", g), data); err != nil {
			b.Fatal(err)
		}
		root = tree
	}

	// Reading the head's tree costs the deltas of its chains: the price of
	// the bytes saved, paid on every read of a tree (there is no cache).
	r.readWhole, r.readDelta = timeReadTree(b, wholeStore, root), timeReadTree(b, store, root)
	for _, id := range []cas.ID{root} {
		entries, err := cas.DecodeTree(mustGet(b, store, id))
		if err != nil {
			b.Fatal(err)
		}
		for _, e := range append(entries, cas.TreeEntry{ID: id}) {
			if _, d, err := cas.GetDepth(store, e.ID); err == nil {
				r.maxDepth = max(r.maxDepth, d)
			}
		}
	}

	last := len(heads) - 1
	for l := 2; l <= 7; l++ {
		for start := 0; start+1<<l <= last; start += 1 << l {
			end := mustGet(b, objs, heads[start+1<<l])
			if start == 0 {
				w := cas.NewPackWriter()
				putClosure(b, objs, w, end, cas.Object{}, nil, nil)
				r.firstBlock[l] = len(finishPack(b, w))
				if l == 7 {
					w := cas.NewPackWriter()
					putClosure(b, objs, w, end, mustGet(b, objs, heads[1]), objs, store)
					r.keptFrom1 = len(finishPack(b, w))
				}
				continue
			}
			from := mustGet(b, objs, heads[start])
			whole, delta := cas.NewPackWriter(), cas.NewPackWriter()
			putClosure(b, objs, whole, end, from, nil, nil)
			putClosure(b, objs, delta, end, from, objs, store)
			r.blocks[l]++
			r.rollWhole[l] += len(finishPack(b, whole))
			data := finishPack(b, delta)
			r.rollDelta[l] += len(data)
			// Every reader of the rollup holds the block's start: a pack
			// that verifies against the store is one it could apply.
			p, err := cas.OpenPack(data)
			if err != nil {
				b.Fatal(err)
			}
			if err := p.WithBases(store).Verify(); err != nil {
				b.Fatalf("rollup of level %d from %d: %v", l, start+1, err)
			}
		}
	}
	return r
}

// putClosure puts the commit to and every object its tree reaches that
// from's tree (a commit, or none) does not, as remote's rollup builder
// and an increment's closure rule do: walking the two trees side by side,
// descending only where they differ. With bases non-nil, a tree that
// replaces a tree at the same path is put as a delta against it, at the
// depth store reports for it.
func putClosure(b *testing.B, src cas.Source, w *cas.PackWriter, to, from cas.Object, bases cas.Source, store *cas.Store) {
	if err := w.Put(to); err != nil {
		b.Fatal(err)
	}
	tc, err := cas.DecodeCommit(to)
	if err != nil {
		b.Fatal(err)
	}
	var old cas.ID
	if from.Body != nil {
		fc, err := cas.DecodeCommit(from)
		if err != nil {
			b.Fatal(err)
		}
		old = fc.Tree
	}
	walkPut(b, src, w, tc.Tree, old, bases, store)
}

func walkPut(b *testing.B, src cas.Source, w *cas.PackWriter, id, old cas.ID, bases cas.Source, store *cas.Store) {
	if id == old || w.Has(id) {
		return
	}
	o := mustGet(b, src, id)
	prev := map[string]cas.TreeEntry{}
	switch {
	case o.Kind != cas.KindTree:
		if err := w.Put(o); err != nil {
			b.Fatal(err)
		}
		return // the notes are inline: no chunks
	case old.IsZero() || bases == nil:
		if err := w.Put(o); err != nil {
			b.Fatal(err)
		}
	default:
		base, depth, err := cas.GetDepth(store, old)
		if err != nil {
			b.Fatal(err)
		}
		if err := w.PutDelta(o, base, depth); err != nil {
			b.Fatal(err)
		}
	}
	if !old.IsZero() {
		entries, err := cas.DecodeTree(mustGet(b, src, old))
		if err != nil {
			b.Fatal(err)
		}
		for _, e := range entries {
			prev[e.Name] = e
		}
	}
	entries, err := cas.DecodeTree(o)
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range entries {
		var was cas.ID
		if p, ok := prev[e.Name]; ok && p.Kind == e.Kind {
			was = p.ID
		}
		if e.Kind == cas.KindTree {
			walkPut(b, src, w, e.ID, was, bases, store)
		} else if e.ID != was && !w.Has(e.ID) {
			if err := w.Put(mustGet(b, src, e.ID)); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func mustGet(b *testing.B, src cas.Source, id cas.ID) cas.Object {
	b.Helper()
	o, err := src.Get(id)
	if err != nil {
		b.Fatal(err)
	}
	return o
}

func finishPack(b *testing.B, w *cas.PackWriter) []byte {
	b.Helper()
	data, err := w.Finish()
	if err != nil {
		b.Fatal(err)
	}
	return data
}
