package objcache

import "github.com/slivingdoc/slivingdoc/cas"

// Sink puts into a pack every object it is given once, except those
// certainly in the observed head's closure (inParent: chunks of R's
// versions of the changed paths), so a 1 KiB append to a large file
// uploads its new chunks, not the file, and the pack still holds all the
// new head needs beyond its parent (the engine's commit attempt).
type Sink struct {
	pack     *cas.PackWriter
	added    map[cas.ID]bool
	inParent map[cas.ID]bool
	// trees, when set (a format-4 store, whose readers all read pack
	// version 2), holds the trees back: PackTrees stores each as a delta
	// of the parent's tree at the same path (docs/format.md §4.8), which
	// every reader that applies the pack holds.
	trees map[cas.ID]cas.Object
}

// NewSink returns a sink skipping the objects of inParent. With
// deltaTrees (a format-4 store) it holds trees back for PackTrees.
func NewSink(inParent map[cas.ID]bool, deltaTrees bool) *Sink {
	f := &Sink{pack: cas.NewPackWriter(), added: map[cas.ID]bool{}, inParent: inParent}
	if deltaTrees {
		f.trees = map[cas.ID]cas.Object{}
	}
	return f
}

// Added reports whether the sink was given id already.
func (f *Sink) Added(id cas.ID) bool { return f.added[id] }

// Holds reports whether Put would skip id: given already, or the
// parent's (cas.Holder).
func (f *Sink) Holds(id cas.ID) bool { return f.added[id] || f.inParent[id] }

// Finish returns the pack of what the sink was given (PackTrees first).
func (f *Sink) Finish() ([]byte, error) { return f.pack.Finish() }

func (f *Sink) Put(o cas.Object) error {
	if f.added[o.ID] || f.inParent[o.ID] {
		return nil
	}
	f.added[o.ID] = true
	if f.trees != nil && o.Kind == cas.KindTree {
		f.trees[o.ID] = o
		return nil
	}
	return f.pack.Put(o)
}

// PackTrees puts the trees held back, walking root and the parent's root
// side by side: a tree whose path the parent has a tree at is stored as
// its delta from that tree (whole when that is not smaller, or when the
// base is WriteDeltaDepth deep in the cache, or not in it at all: its
// depth is then unknown). Trees the walk does not reach go whole.
func (f *Sink) PackTrees(store *cas.Store, root, parent cas.ID) error {
	if f.trees == nil {
		return nil
	}
	var walk func(id, old cas.ID) error
	walk = func(id, old cas.ID) error {
		o, ok := f.trees[id]
		if !ok {
			return nil // the parent's, or packed already
		}
		delete(f.trees, id)
		var olds map[string]cas.TreeEntry
		var base cas.Object
		var depth int
		err := cas.ErrNotFound
		if !old.IsZero() {
			// A path the parent has no tree at (old zero) is not looked up:
			// the store would miss and list its directory again to be sure,
			// once per new tree (a first commit of a large tree paid that for
			// each of its directories).
			base, depth, err = cas.GetDepth(store, old)
		}
		if err != nil || base.Kind != cas.KindTree {
			err = f.pack.Put(o)
		} else {
			err = f.pack.PutDelta(o, base, depth)
			if entries, derr := cas.DecodeTree(base); derr == nil {
				olds = make(map[string]cas.TreeEntry, len(entries))
				for _, e := range entries {
					olds[e.Name] = e
				}
			}
		}
		if err != nil {
			return err
		}
		entries, err := cas.DecodeTree(o)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if e.Kind != cas.KindTree {
				continue
			}
			var was cas.ID
			if p, ok := olds[e.Name]; ok && p.Kind == cas.KindTree {
				was = p.ID
			}
			if err := walk(e.ID, was); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root, parent); err != nil {
		return err
	}
	for _, o := range f.trees {
		if err := f.pack.Put(o); err != nil {
			return err
		}
	}
	f.trees = nil
	return nil
}

// TreeOf returns the flat file map of the commit head (empty for zero).
func TreeOf(src cas.Source, head cas.ID) (map[string]cas.ID, error) {
	if head.IsZero() {
		return map[string]cas.ID{}, nil
	}
	c, err := cas.ReadCommit(src, head)
	if err != nil {
		return nil, err
	}
	return cas.ReadTree(src, c.Tree)
}
