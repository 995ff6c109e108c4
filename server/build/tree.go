package build

import (
	"errors"

	"github.com/slivingdoc/slivingdoc/cas"
)

// writeTree returns the root tree of ids, putting the tree objects the
// chain lacks into sink. When few paths changed it rebuilds only their
// directories from R's tree (head's, read from the chain's own cache, so
// every reused subtree is in the chain the publication extends); on 10,000
// files that is two tree objects instead of a hundred and 10,000 entries
// sorted, encoded and hashed. Anything unexpected falls back to building
// the whole tree from ids, which is always correct.
func (a *Attempt) writeTree(sink cas.Sink, chain *cas.Store, head cas.ID, ids, changes map[string]cas.ID) (cas.ID, error) {
	if !head.IsZero() && len(changes) <= len(ids)/4 {
		if tree, err := updateTree(sink, chain, head, changes); err == nil {
			return tree, nil
		} else if !errors.Is(err, cas.ErrNotFound) {
			a.c.Env.Log.Warn("cannot update the tree in place; building it whole", "err", err)
		}
	}
	return cas.WriteTree(sink, ids)
}

func updateTree(sink cas.Sink, chain *cas.Store, head cas.ID, changes map[string]cas.ID) (cas.ID, error) {
	c, err := cas.ReadCommit(chain, head)
	if err != nil {
		return cas.ID{}, err
	}
	return cas.UpdateTree(chain, sink, c.Tree, changes)
}

// changedPaths returns the paths where ids differs from r: each with its ID
// in ids, zero where ids lacks it.
func changedPaths(r, ids map[string]cas.ID) map[string]cas.ID {
	changes := map[string]cas.ID{}
	kept := 0
	for p, id := range ids {
		if rid, ok := r[p]; ok {
			kept++
			if rid == id {
				continue
			}
		}
		changes[p] = id
	}
	if kept != len(r) { // some paths of r are gone
		for p := range r {
			if _, ok := ids[p]; !ok {
				changes[p] = cas.ID{}
			}
		}
	}
	return changes
}
