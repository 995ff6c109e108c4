package server

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/pstate"
)

// Store identity (remote/storeid.go). A URL names a place; the store ID
// names the notebook there. Everything this host keeps about a store
// outside it is keyed by the ID, so a store deleted and started again at
// the same URL (a new ID) meets none of the old one's caches:
//
//	P/stores/<hash(URL)>/store-id   the ID last read from the store at URL and the key of its records (pstate.ReadStoreID)
//	P/stores/<key>/...              probe verdict, object caches, highest generation (pstate.Highest)
//
// The key of the first store this host meets at a URL is hash(URL), the
// key of every record made before store IDs existed, so they stay in use:
// a store that was not yet named and is then named is the same store. A
// store met later at the URL with another ID (or none, where there was
// one) gets a key of its own, hash(URL, ID), and starts with empty caches.
//
// The ID costs no request on most calls: it is read once from the store and
// kept in P, then read again only when the store looks different (its
// `current` is absent, or its generation is lower than this host saw).
// Every commit reads `current`, so a store replaced at the URL shows
// there. A writer names a store that has no ID yet before it publishes
// (nameStore).
//
// Binaries before format version 4 also kept, beside these, a contention
// record (P/stores/<key>/contention) and the machine's turns with their
// kept state and packs (<user cache dir>/slivingdoc/turns/). This build
// neither reads nor writes them: a commit never builds on a state it did
// not read, so what they say cannot mislead it.

// storeKeyed is what the engine keeps per store identity. It is replaced
// whole (Engine.keyed) when the store at the URL turns out to be another.
type storeKeyed struct {
	id          string // "": the store is not yet named
	key         string // names P/stores/<key> (hex)
	generations *pstate.Highest
}

// newKeyed builds the keyed parts for store ID id ("": not yet named)
// under key.
func (e *Engine) newKeyed(id, key string) *storeKeyed {
	dir := filepath.Join(e.private, "stores", key)
	k := &storeKeyed{id: id, key: key, generations: pstate.NewHighest(dir, e.store)}
	if e.longLived {
		k.generations.Later = e.afterReply.start
	}
	return k
}

// keyedNow is the keyed parts of the store as last identified.
func (e *Engine) keyedNow() *storeKeyed { return e.keyed.Load() }

// StoreID is the ID of the engine's store as last identified ("": not
// yet named, or not yet read).
func (e *Engine) StoreID() string { return e.keyedNow().id }

// cachedKeyed is the ID and key P recorded for this URL; without a record
// (or with a damaged one), no ID and the URL's own key.
func (e *Engine) cachedKeyed() (id, key string, recorded bool) {
	if id, key, recorded = pstate.ReadStoreID(e.private, e.storeKey); !recorded {
		return "", e.storeKey, false
	}
	return id, key, true
}

// keyFor is the key of store ID id met at this URL after the store keyed
// by prev: a store never met before here gets one of its own.
func (e *Engine) keyFor(id string, prev *storeKeyed) string {
	if prev.id == "" {
		return prev.key // the same store, named now
	}
	if id == "" {
		// Another store, not yet named: a key of its own, that the
		// store it replaced cannot have.
		return pstate.HashKey(e.store.Identity() + "\x00unnamed after\x00" + prev.id)
	}
	return pstate.HashKey(e.store.Identity() + "\x00" + id)
}

// identify makes sure the engine knows its store's ID: from P when it was
// recorded, else by one read of the store (readers do not name a store:
// one without an ID is used under its key until a writer names it).
func (e *Engine) identify(ctx context.Context) {
	e.identMu.Lock()
	defer e.identMu.Unlock()
	if e.identified {
		return
	}
	if _, _, recorded := e.cachedKeyed(); recorded && e.keyedNow().id != "" {
		e.identified = true
		return
	}
	id, err := remote.ReadStoreID(ctx, e.store)
	if err != nil {
		// The call goes on under the key it has (the URL's own for a
		// store this host never met, which is what a first read of the
		// ID would give it); the operation's own requests report a
		// store that does not answer, and the next call reads again.
		e.log.Warn("cannot read the store ID", "err", err)
		return
	}
	e.identified = true
	if cur := e.keyedNow(); id != cur.id {
		e.adopt(id, e.keyFor(id, cur))
	}
}

// adopt switches the engine to store ID id under key and records both in
// P. The caller holds identMu. A new key's caches start empty (or as this
// host left them for that store); its probe runs once.
func (e *Engine) adopt(id, key string) {
	k := e.newKeyed(id, key)
	if cur := e.keyedNow(); cur.key == key {
		// The same records (a store named now, keyFor): one memory of
		// them, so that calls still running on cur and the next ones
		// check against one highest generation, and its writes (one at a
		// time, never a lower after a higher) stay one writer's, and a
		// long-lived engine's write left for after the reply is not lost.
		k.generations = cur.generations
	}
	e.keyed.Store(k)
	if err := pstate.WriteStoreID(e.private, e.storeKey, id, key); err != nil {
		e.log.Warn("cannot record the store ID", "err", err)
	}
	e.probe.Forget()
}

// recheck reads the store's ID again and switches to it when it is not
// the one k was built for; it returns the keyed parts to use. A failed
// read keeps k: the caller's own check then decides.
func (e *Engine) recheck(ctx context.Context, k *storeKeyed) *storeKeyed {
	id, err := remote.ReadStoreID(ctx, e.store)
	if err != nil {
		e.log.Warn("cannot read the store ID", "err", err)
		return k
	}
	e.identMu.Lock()
	defer e.identMu.Unlock()
	e.identified = true
	cur := e.keyedNow()
	if id == cur.id {
		return cur
	}
	if cur.id == "" {
		e.log.Info("the store was named by a writer", "storeId", id)
	} else {
		// Another store at the same URL: deleted and started again, or
		// replaced by a copy of a different store.
		e.log.Warn("the store at this URL is not the one this host knew; its records are set aside", "was", cur.id, "now", id)
	}
	e.adopt(id, e.keyFor(id, cur))
	return e.keyedNow()
}

// observe is the remote.Options.Observe hook: it re-checks the store's
// identity when the state read looks like another store's (absent, or
// below the highest generation this host saw for the ID), then checks
// the generation against what this host saw of that store.
func (e *Engine) observe(ctx context.Context, s remote.State) error {
	k := e.keyedNow()
	if s.Generation() == 0 {
		k = e.recheck(ctx, k)
	}
	err := k.generations.Observe(ctx, s)
	if errors.Is(err, remote.ErrGenerationRegressed) && s.Generation() != 0 {
		if nk := e.recheck(ctx, k); nk != k {
			err = nk.generations.Observe(ctx, s)
		}
	}
	return err
}

// nameStore gives the store an ID before this engine first publishes to
// it, when it has none (the first publication to a new store, or to one
// an older binary made).
func (e *Engine) nameStore(ctx context.Context) error {
	if e.keyedNow().id != "" {
		return nil
	}
	id, err := remote.EnsureStoreID(ctx, e.store)
	if err != nil {
		return err
	}
	e.identMu.Lock()
	defer e.identMu.Unlock()
	e.identified = true
	if cur := e.keyedNow(); cur.id != id {
		e.adopt(id, e.keyFor(id, cur))
	}
	return nil
}
