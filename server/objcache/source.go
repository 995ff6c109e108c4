package objcache

import (
	"cmp"
	"errors"
	"os"
	"slices"

	"github.com/slivingdoc/slivingdoc/cas"
)

// Source reads from the current chain's cache first, then from older
// chain caches of the same store (baseline content that a checkpoint no
// longer reaches may still be there), newest first, opening each only
// when the ones before it lack an object: opening a chain's cache costs
// in proportion to its files (up to ~1,500 for a full chain), and a
// commit that opened every retained chain grew slower with history.
type Source struct {
	caches  *Caches
	primary *Chain
	others  []*Chain
	names   []string // chain caches not opened yet, newest first
	scanned bool
	// More, when set, is read last: the packs a rewrite to an accepted
	// generation below the state's head fetched (Accepted).
	More cas.Source
}

// Source returns a source reading primary (nil: none) first, then the
// other caches of the store.
func (cs *Caches) Source(primary *Chain) *Source {
	return &Source{caches: cs, primary: primary}
}

// Primary is the cache the source reads first (nil if none).
func (s *Source) Primary() *Chain { return s.primary }

// Others are the older caches the source has opened so far, in the order
// it reads them.
func (s *Source) Others() []*Chain { return s.others }

// Holder returns the store of an open chain cache that holds id, found
// without I/O (blame reads a file's versions from the cache that holds
// them); nil when none open holds it.
func (s *Source) Holder(id cas.ID) *cas.Store {
	if p := s.primary; p != nil && p.store.Has(id) {
		return p.store
	}
	for _, c := range s.others {
		if c.store.Has(id) {
			return c.store
		}
	}
	return nil
}

// Rescan makes the source look at every chain cache again (one may have
// been created since it first fell back to them). Listing again costs a
// directory read; the caches themselves stay open.
func (s *Source) Rescan() {
	s.scanned, s.others, s.names = false, nil, nil
}

func (s *Source) Get(id cas.ID) (cas.Object, error) {
	var firstErr error
	if s.primary != nil {
		o, err := s.primary.store.Get(id)
		if err == nil {
			return o, nil
		}
		firstErr = err
		if !errors.Is(err, cas.ErrNotFound) {
			return cas.Object{}, err
		}
	}
	if !s.scanned {
		s.scanned = true
		ents, _ := os.ReadDir(s.caches.Dir())
		for _, ent := range ents {
			if ent.IsDir() && (s.primary == nil || ent.Name() != s.primary.key) {
				s.names = append(s.names, ent.Name())
			}
		}
		// Newest first: the baseline's content is most likely in the
		// latest chain (names of another form sort last).
		slices.SortStableFunc(s.names, func(a, b string) int {
			ta, oka := chainThrough(a)
			tb, okb := chainThrough(b)
			switch {
			case oka != okb:
				if oka {
					return -1
				}
				return 1
			case ta != tb:
				return cmp.Compare(tb, ta)
			}
			return 0
		})
	}
	for i := 0; ; i++ {
		for i == len(s.others) && len(s.names) > 0 {
			name := s.names[0]
			s.names = s.names[1:]
			if c, err := s.caches.Open(name); err == nil {
				s.others = append(s.others, c)
			}
		}
		if i == len(s.others) {
			break
		}
		o, err := s.others[i].store.Get(id)
		if err == nil {
			return o, nil
		}
		// A damaged copy in an older chain's cache must surface as
		// corrupt (so the caller heals the cache), not as missing.
		if firstErr == nil || (errors.Is(firstErr, cas.ErrNotFound) && !errors.Is(err, cas.ErrNotFound)) {
			firstErr = err
		}
	}
	if s.More != nil && (firstErr == nil || errors.Is(firstErr, cas.ErrNotFound)) {
		return s.More.Get(id)
	}
	if firstErr == nil {
		firstErr = cas.ErrNotFound
	}
	return cas.Object{}, firstErr
}
