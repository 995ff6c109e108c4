package history

import (
	"context"
	"errors"
	"slices"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/merge"
	"github.com/slivingdoc/slivingdoc/remote"
)

// Log returns up to n recent publications of state, newest first, read
// from objs: it walks n commits back from the head (never the whole
// history) and stops early where the cache no longer holds a parent
// (before the active checkpoint). A catch-up through rollups holds the
// head's closure but not the older commits and trees a log reads: on the
// first miss, fill makes the cache hold the whole active chain and the
// read is tried again. publications lists the increments of a generation
// range (remote.Notebook.Publications); entries carry the diffstat only.
func Log(ctx context.Context, state remote.State, objs Objects, fill func() error, n int, publications func(ctx context.Context, state remote.State, from, to uint64) ([]remote.Increment, error)) ([]Entry, error) {
	src := &fillOnMiss{primary: objs, fill: fill}
	out := []Entry{}
	// A commit's generation is the increment that published it; commits
	// folded into the checkpoint have none left and end the log.
	gens := map[cas.ID]uint64{}
	authors := map[cas.ID]string{} // by head; only format v4 records one
	if m := state.Manifest; m != nil {
		if !m.Checkpoint.IsGenesis() {
			gens[m.Checkpoint.Head] = m.Checkpoint.Through
		}
		// Checkpoint swaps take generations too: 2n covers n entries
		// unless checkpoints are nearly as frequent as commits.
		lo := max(m.Checkpoint.Through+1, m.Generation-min(m.Generation, uint64(2*n+2*remote.SegmentFanout)))
		incs, err := publications(ctx, state, lo, m.Generation)
		if err != nil {
			return nil, fail("read history", err)
		}
		for _, inc := range incs {
			gens[inc.Head] = inc.Generation
			if inc.Author != "" {
				authors[inc.Head] = inc.Author
			}
		}
	}
	head := state.Head()
	var tree map[string]cas.ID
	for len(out) < n && !head.IsZero() {
		gen, ok := gens[head]
		if !ok {
			break
		}
		o, err := src.Get(head)
		if errors.Is(err, cas.ErrNotFound) {
			break // older than the chain the cache holds
		}
		if err != nil { // a damaged cached pack: Log heals and retries
			return nil, fail("read commit", err)
		}
		c, err := cas.DecodeCommit(o)
		if err != nil {
			return nil, fail("decode commit", err)
		}
		if tree == nil {
			if tree, err = cas.ReadTree(src, c.Tree); err != nil {
				return nil, fail("read tree", err)
			}
		}
		parentTree := map[string]cas.ID{}
		if !c.Parent.IsZero() {
			po, err := src.Get(c.Parent)
			if err == nil {
				var pc cas.Commit
				if pc, err = cas.DecodeCommit(po); err != nil {
					return nil, fail("decode commit", err)
				}
				parentTree, err = cas.ReadTree(src, pc.Tree)
			}
			if errors.Is(err, cas.ErrNotFound) {
				parentTree = nil // older than the chain the cache holds
			} else if err != nil {
				return nil, fail("read parent", err)
			}
		}
		entry := Entry{Generation: gen, Time: c.Time, Message: string(c.Message), Author: authors[head], Files: []Change{}}
		if parentTree != nil {
			if entry.Files, err = treeDelta(src, parentTree, tree); err != nil {
				return nil, fail("diffstat", err)
			}
		}
		out = append(out, entry)
		head, tree = c.Parent, parentTree
		if tree == nil {
			break
		}
	}
	return out, nil
}

// TreeDelta is the per-file line delta from one tree to the next, sorted
// by path (Old and New left nil).
func TreeDelta(src cas.Source, from, to map[string]cas.ID) ([]Change, error) {
	return treeDelta(src, from, to)
}

// fillOnMiss reads from the cache and, after the first miss, from the
// cache filled with the whole chain.
type fillOnMiss struct {
	primary Objects
	fill    func() error
	filled  bool
}

func (f *fillOnMiss) Get(id cas.ID) (cas.Object, error) {
	o, err := f.primary.Get(id)
	if err == nil || !errors.Is(err, cas.ErrNotFound) || f.filled {
		return o, err
	}
	f.filled = true
	if ferr := f.fill(); ferr != nil {
		return cas.Object{}, ferr
	}
	f.primary.Rescan()
	return f.primary.Get(id)
}

// treeDelta is the per-file line delta from one tree to the next.
func treeDelta(src cas.Source, from, to map[string]cas.ID) ([]Change, error) {
	out := []Change{}
	for _, p := range unionPaths(from, to) {
		a, hadA := from[p]
		b, hasB := to[p]
		if hadA && hasB && a == b {
			continue
		}
		var ac, bc []byte
		var err error
		if hadA {
			if ac, err = cas.ReadFile(src, a); err != nil {
				return nil, err
			}
		}
		if hasB {
			if bc, err = cas.ReadFile(src, b); err != nil {
				return nil, err
			}
		}
		ins, del := merge.Stat(ac, bc) // an absent side is empty
		out = append(out, Change{Path: p, Insertions: ins, Deletions: del})
	}
	return out, nil
}

// unionPaths returns the paths of a and b, sorted.
func unionPaths(a, b map[string]cas.ID) []string {
	seen := make(map[string]bool, len(a)+len(b))
	for p := range a {
		seen[p] = true
	}
	for p := range b {
		seen[p] = true
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}
