package remote

import (
	"errors"
	"fmt"

	"github.com/slivingdoc/slivingdoc/cas"
)

// objectRefs returns the objects o names that a reader needs to read it:
// a commit's tree (not its parent: a closure stops at the commit), a
// tree's entries, a file's chunks. A chunk names nothing.
func objectRefs(o cas.Object) ([]cas.ID, error) {
	switch o.Kind {
	case cas.KindCommit:
		c, err := cas.DecodeCommit(o)
		if err != nil {
			return nil, err
		}
		return []cas.ID{c.Tree}, nil
	case cas.KindTree:
		entries, err := cas.DecodeTree(o)
		if err != nil {
			return nil, err
		}
		out := make([]cas.ID, len(entries))
		for i, e := range entries {
			out[i] = e.ID
		}
		return out, nil
	case cas.KindFile:
		f, err := cas.DecodeFile(o)
		if err != nil {
			return nil, err
		}
		out := make([]cas.ID, len(f.Chunks))
		for i, c := range f.Chunks {
			out[i] = c.ID
		}
		return out, nil
	}
	return nil, nil
}

// putClosure puts every object reachable from root (root included) into w,
// depth first, so a directory's files and a file's chunks stay together in
// the pack. Objects w already holds are not visited again: their closure
// is in w already.
func putClosure(src cas.Source, root cas.ID, w *cas.PackWriter) error {
	stack := []cas.ID{root}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if w.Has(id) {
			continue
		}
		o, err := src.Get(id)
		if err != nil {
			return err
		}
		if o.ID != id {
			return fmt.Errorf("%w: the source returned another object", cas.ErrCorrupt)
		}
		if err := w.Put(o); err != nil {
			return err
		}
		refs, err := objectRefs(o)
		if err != nil {
			return err
		}
		for i := len(refs) - 1; i >= 0; i-- {
			if !w.Has(refs[i]) {
				stack = append(stack, refs[i])
			}
		}
	}
	return nil
}

// packSource reads objects from a set of opened packs (each Get verifies
// the object's ID).
type packSource []*cas.Pack

func (s packSource) Get(id cas.ID) (cas.Object, error) {
	for _, p := range s {
		o, err := p.Get(id)
		if err == nil {
			return o, nil
		}
		if !errors.Is(err, cas.ErrNotFound) {
			return cas.Object{}, err
		}
	}
	return cas.Object{}, cas.ErrNotFound
}

// sources tries each source in turn; a miss in one falls through.
type sources []cas.Source

func (s sources) Get(id cas.ID) (cas.Object, error) {
	var first error
	for _, src := range s {
		if src == nil {
			continue
		}
		o, err := src.Get(id)
		if err == nil {
			return o, nil
		}
		if first == nil || errors.Is(first, cas.ErrNotFound) {
			first = err
		}
	}
	if first == nil {
		first = cas.ErrNotFound
	}
	return cas.Object{}, first
}

// sourceFunc adapts a function to cas.Source.
type sourceFunc func(cas.ID) (cas.Object, error)

func (f sourceFunc) Get(id cas.ID) (cas.Object, error) { return f(id) }
