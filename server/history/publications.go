package history

import (
	"cmp"
	"context"
	"slices"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/remote"
)

// Publication is one retained accepted publication.
type Publication struct {
	Generation  uint64
	Publication string
	Parent      cas.ID // the head it was published on (zero for the first)
	Head        cas.ID
	Author      string // as the store recorded it (format v4); "" when unknown
}

// Group is a set of packs to fetch into the cache named Key so that
// objects of retained publications can be read.
type Group struct {
	Key   string
	Packs []remote.PackRef
	// Through is the newest generation whose packs are in Packs: a chain
	// is listed only as far as a reader asks (ChainsBetween), and a later
	// read further along it fetches the rest.
	Through uint64
}

// retained is what publications returns for a generation range.
type retained struct {
	pubs  []Publication // those in the range, oldest first
	extra []Group       // packs beyond the active chain that hold them
}

// publications returns the retained publications whose generation lies in
// [from, to] and at or above ret.Oldest (older ones that `current` still
// lists cannot be shown: the tree they were made on is gone). It is the
// one place history reads the manifest's layout (the increments of the
// active chain and of the retained chains, format v1 from `current`, v2
// through remote.Notebook.ChainsBetween, which reads only the segments of
// the chains that hold the range, through to; every chain's packs hold the
// trees of its increments and of its checkpoint, the parent of its first
// increment).
func publications(ctx context.Context, eng Engine, state remote.State, ret remote.Retention, from, to uint64) (retained, error) {
	var r retained
	m := state.Manifest
	if m == nil || ret.Oldest == 0 {
		return r, nil
	}
	from = max(from, ret.Oldest)
	if from > to {
		return r, nil
	}
	chains := m.Chains()
	keyOf := eng.KeyOf
	if m.Version >= 2 {
		// Store format v2: the history is in segments (remote.Notebook.
		// Chains reads them); a cache caught up through rollups holds the
		// head's closure but not older commits, so the active chain's
		// packs are fetched too when a publication in it is asked for.
		var err error
		if chains, err = eng.ChainsBetween(ctx, state, ret.Floor, from, to); err != nil {
			return r, err
		}
		keyOf = func(c remote.Chain) string { return eng.KeyAt(c.Checkpoint) }
	}
	n := 0
	for _, c := range chains {
		n += len(c.Increments)
	}
	r.pubs = make([]Publication, 0, n)
	// The chains come active first, then older, each oldest first: read
	// from the last, the publications come out in order, which the sort
	// below then only checks.
	for i := len(chains) - 1; i >= 0; i-- {
		c := chains[i]
		if c.Partial {
			continue // below ret.Oldest: listed, not readable
		}
		hit := false
		for _, inc := range c.Increments {
			if inc.Generation >= from && inc.Generation <= to {
				r.pubs = append(r.pubs, Publication{Generation: inc.Generation, Publication: inc.Publication, Parent: inc.Parent, Head: inc.Head, Author: inc.Author})
				hit = true
			}
		}
		if hit && (i > 0 || m.Version >= 2) {
			r.extra = append(r.extra, Group{Key: keyOf(c), Packs: c.Packs(), Through: c.Increments[len(c.Increments)-1].Generation})
		}
	}
	// The groups as before: the active chain's first.
	slices.Reverse(r.extra)
	if !slices.IsSortedFunc(r.pubs, byGeneration) {
		slices.SortFunc(r.pubs, byGeneration)
	}
	return r, nil
}

func byGeneration(a, b Publication) int { return cmp.Compare(a.Generation, b.Generation) }
