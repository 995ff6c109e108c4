package server

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/remote"
)

// The object cache of one store lives in P/stores/<hash(identity)>/chains/,
// one cas.Store per active chain, named after the generation its
// checkpoint reaches and its first pack (the checkpoint, or the first
// increment before any checkpoint). Within one
// chain the pack list only grows, so every object in a chain's cache is
// reachable through the accepted manifest: a commit may skip uploading any
// object the cache holds. When a checkpoint replaces the chain, a new cache
// starts; the caches of the retained chains stay readable as a fallback
// for baseline content, and those of chains the store no longer keeps are
// removed (prune.go).

// chainCache is one open cache directory.
type chainCache struct {
	key   string
	store *cas.Store
}

func (c *chainCache) close() error { return c.store.Close() }

// chainKey names the cache of the chain state belongs to.
func chainKey(state remote.State) string {
	if state.Manifest == nil {
		return "empty"
	}
	return chainKeyOf(state.Manifest.Active())
}

// chainKeyOf names the cache of chain c: the generation its checkpoint
// reaches (so caches order by age without a manifest, see prune.go) and
// the hash of its first pack.
func chainKeyOf(c remote.Chain) string {
	packs := c.Packs()
	if len(packs) == 0 {
		return "empty"
	}
	return strconv.FormatUint(c.Checkpoint.Through, 10) + "-" + hashKey(packs[0].Key)
}

// chainThrough returns the checkpoint generation a cache name records
// (0 for the empty notebook's); false for a name of another form (an
// older release's cache).
func chainThrough(key string) (uint64, bool) {
	if key == "empty" {
		return 0, true
	}
	g, _, ok := strings.Cut(key, "-")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(g, 10, 64)
	return n, err == nil
}

func packName(ref remote.PackRef) string { return hashKey(ref.Key) + ".pack" }

func (e *Engine) chainsDir() string { return filepath.Join(e.storeDir(), "chains") }

// openChain returns the (memoised) cache named key.
func (e *Engine) openChain(key string) (*chainCache, error) {
	c, _, err := e.openChainCreated(key)
	return c, err
}

// openChainCreated is openChain, also reporting whether the cache
// directory was created now (the first sight of a chain in this P).
func (e *Engine) openChainCreated(key string) (*chainCache, bool, error) {
	e.objMu.Lock()
	defer e.objMu.Unlock()
	if c := e.objects[key]; c != nil {
		return c, false, nil
	}
	dir := filepath.Join(e.chainsDir(), key)
	_, err := os.Stat(dir)
	created := errors.Is(err, fs.ErrNotExist)
	s, err := cas.OpenStore(dir)
	if err != nil {
		return nil, false, err
	}
	c := &chainCache{key: key, store: s}
	e.objects[key] = c
	return c, created, nil
}

// openChainOf opens the cache of state's chain. The first sight of a
// chain in this P means a checkpoint was swapped in: the caches of chains
// the manifest no longer names are then removed (prune.go).
func (e *Engine) openChainOf(state remote.State) (*chainCache, error) {
	c, created, err := e.openChainCreated(chainKey(state))
	if err == nil && created {
		e.pruneChains(state)
	}
	return c, err
}

// fetchParallel bounds concurrent pack downloads: enough to hide latency
// on a cold pull, few enough not to flood a small store.
const fetchParallel = 8

// syncBundleBytes bounds the fetched bytes sync holds before keeping them:
// a sync whose packs are larger (a cold pull of a big notebook) writes a
// bundle per this many bytes instead of holding them all in memory. A
// variable for tests.
var syncBundleBytes = 64 << 20

// sync makes the cache of state's chain hold every pack of the chain,
// downloading the missing ones in parallel; each is verified (size and
// BLAKE3 by remote, pack trailer, index and objects by cas) before it is
// kept. The packs of one sync are kept in one file (a cas bundle, up to
// syncBundleBytes): a commit under N writers fetches about N-1 increments,
// and creating a file costs far more than writing its bytes.
func (e *Engine) sync(ctx context.Context, state remote.State) (*chainCache, error) {
	c, err := e.openChainOf(state)
	if err != nil {
		return nil, mapErr(err)
	}
	if state.Manifest == nil {
		return c, nil
	}
	missing := missingPacks(c.store, state.Manifest.Packs())
	if len(missing) > 0 {
		// Another process sharing the cache may have kept them, in a
		// bundle HasPack does not look for: one rescan finds it.
		if err := c.store.Refresh(); err != nil {
			return nil, mapErr(err)
		}
		missing = missingPacks(c.store, missing)
	}
	if len(missing) == 0 {
		return c, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, fetchParallel)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	fail := func(err error) { once.Do(func() { first = err; cancel() }) }
	var mu sync.Mutex // guards pending, pendingBytes
	var pending []cas.NamedPack
	pendingBytes := 0
	for _, ref := range missing {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if ctx.Err() != nil {
				return
			}
			data, err := e.notebook.FetchPack(ctx, ref)
			if err != nil {
				fail(err)
				return
			}
			mu.Lock()
			pending = append(pending, cas.NamedPack{Name: packName(ref), Data: data})
			pendingBytes += len(data)
			var full []cas.NamedPack
			if pendingBytes >= syncBundleBytes {
				full, pending, pendingBytes = pending, nil, 0
			}
			mu.Unlock()
			if full != nil {
				if err := c.store.AddPacks(full); err != nil {
					fail(err)
				}
			}
		})
	}
	wg.Wait()
	if first == nil {
		first = ctx.Err() // the caller's: some packs were not fetched
	}
	// What was fetched is kept even if another pack failed: the next sync
	// need not download it again.
	if err := c.store.AddPacks(pending); err != nil && first == nil {
		first = err
	}
	if first != nil {
		e.storeTrouble(first)
		return nil, packErr(first)
	}
	return c, nil
}

// missingPacks returns the packs of refs the cache store does not hold.
func missingPacks(store *cas.Store, refs []remote.PackRef) []remote.PackRef {
	var missing []remote.PackRef
	for _, ref := range refs {
		if !store.HasPack(packName(ref)) {
			missing = append(missing, ref)
		}
	}
	return missing
}

// objectSource reads from the current chain's cache first, then from older
// chain caches of the same store (baseline content that a checkpoint no
// longer reaches may still be there).
type objectSource struct {
	e       *Engine
	primary *chainCache
	others  []*chainCache
	scanned bool
}

func (e *Engine) source(primary *chainCache) *objectSource {
	return &objectSource{e: e, primary: primary}
}

func (s *objectSource) Get(id cas.ID) (cas.Object, error) {
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
		ents, _ := os.ReadDir(s.e.chainsDir())
		for _, ent := range ents {
			if !ent.IsDir() || (s.primary != nil && ent.Name() == s.primary.key) {
				continue
			}
			if c, err := s.e.openChain(ent.Name()); err == nil {
				s.others = append(s.others, c)
			}
		}
	}
	for _, c := range s.others {
		o, err := c.store.Get(id)
		if err == nil {
			return o, nil
		}
		// A damaged copy in an older chain's cache must surface as
		// corrupt (so the caller heals the cache), not as missing.
		if firstErr == nil || (errors.Is(firstErr, cas.ErrNotFound) && !errors.Is(err, cas.ErrNotFound)) {
			firstErr = err
		}
	}
	if firstErr == nil {
		firstErr = cas.ErrNotFound
	}
	return cas.Object{}, firstErr
}

// filterSink puts into a pack only the objects the chain does not hold yet,
// so a commit uploads what changed (a 1 KiB append to a large file uploads
// its new chunks, not the file).
type filterSink struct {
	have  *cas.Store
	pack  *cas.PackWriter
	added map[cas.ID]bool
}

func (f *filterSink) Put(o cas.Object) error {
	if f.added[o.ID] || (f.have != nil && f.have.Has(o.ID)) {
		return nil
	}
	f.added[o.ID] = true
	return f.pack.Put(o)
}

// treeOf returns the flat file map of the commit head (empty for zero).
func treeOf(src cas.Source, head cas.ID) (map[string]cas.ID, error) {
	if head.IsZero() {
		return map[string]cas.ID{}, nil
	}
	o, err := src.Get(head)
	if err != nil {
		return nil, err
	}
	c, err := cas.DecodeCommit(o)
	if err != nil {
		return nil, err
	}
	return cas.ReadTree(src, c.Tree)
}
