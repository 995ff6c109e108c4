package storeview

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"

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
// (NameStore).
//
// Binaries before format version 4 also kept, beside these, a contention
// record (P/stores/<key>/contention) and the machine's turns with their
// kept state and packs (<user cache dir>/slivingdoc/turns/). This build
// neither reads nor writes them: a commit never builds on a state it did
// not read, so what they say cannot mislead it.

// Identity is which store the engine's store is, as this host last
// identified it: its ID, the key of its records in P (Dir) and the
// highest generation seen of it, with the check of every read of its
// `current` (Observe). It is the store's identity by ID; the store's
// Identity method names only its URL. The engine keeps one for its
// store; it is safe for concurrent use.
type Identity struct {
	private  string // P, absolute
	urlKey   string // hash of the store's URL identity
	store    remote.Store
	locator  string
	later    func(func())
	switched func()
	log      *slog.Logger

	// keyed is replaced whole when the store at the URL turns out to be
	// another.
	keyed      atomic.Pointer[keyed]
	mu         sync.Mutex
	identified bool // the ID is known (from P or the store) for this engine
}

// IdentityConfig is what an Identity is given.
type IdentityConfig struct {
	Private string       // the private root P (absolute, cleaned)
	Store   remote.Store // the store, read for its ID and named by NameStore
	// Locator, opaque here, says how to open Store again; Remember
	// records it with each directory's store.
	Locator string
	// Later, when set (a long-lived engine), runs the write of a higher
	// generation seen after the engine's reply (pstate.Highest.Later).
	Later func(func())
	// Switched, when set, runs each time the identity switches to
	// another ID (a store named, or another store met at the URL), under
	// the identity's lock: the engine forgets there what it keeps of the
	// store outside P/stores/<key> (the probe's verdict).
	Switched func()
	Log      *slog.Logger
}

// keyed is what the engine keeps per store identity.
type keyed struct {
	id          string // "": the store is not yet named
	key         string // names P/stores/<key> (hex)
	generations *pstate.Highest
}

// NewIdentity is the identity P recorded for c.Store's URL, if any (the
// store itself is read for it by Identify otherwise).
func NewIdentity(c IdentityConfig) *Identity {
	i := &Identity{private: c.Private, urlKey: pstate.HashKey(c.Store.Identity()), store: c.Store,
		locator: c.Locator, later: c.Later, switched: c.Switched, log: c.Log}
	id, key, _ := i.cached()
	i.keyed.Store(i.newKeyed(id, key))
	return i
}

// newKeyed builds the keyed parts for store ID id ("": not yet named)
// under key.
func (i *Identity) newKeyed(id, key string) *keyed {
	k := &keyed{id: id, key: key, generations: pstate.NewHighest(i.dirOf(key), i.store)}
	k.generations.Later = i.later
	return k
}

func (i *Identity) dirOf(key string) string { return filepath.Join(i.private, "stores", key) }

// now is the keyed parts of the store as last identified.
func (i *Identity) now() *keyed { return i.keyed.Load() }

// ID is the ID of the store as last identified ("": not yet named, or
// not yet read).
func (i *Identity) ID() string { return i.now().id }

// Dir is P/stores/<key> of the store as last identified: where every
// record this host keeps of the store goes.
func (i *Identity) Dir() string { return i.dirOf(i.now().key) }

// cached is the ID and key P recorded for this URL; without a record
// (or with a damaged one), no ID and the URL's own key.
func (i *Identity) cached() (id, key string, recorded bool) {
	if id, key, recorded = pstate.ReadStoreID(i.private, i.urlKey); !recorded {
		return "", i.urlKey, false
	}
	return id, key, true
}

// keyFor is the key of store ID id met at this URL after the store keyed
// by prev: a store never met before here gets one of its own.
func (i *Identity) keyFor(id string, prev *keyed) string {
	if prev.id == "" {
		return prev.key // the same store, named now
	}
	if id == "" {
		// Another store, not yet named: a key of its own, that the
		// store it replaced cannot have.
		return pstate.HashKey(i.store.Identity() + "\x00unnamed after\x00" + prev.id)
	}
	return pstate.HashKey(i.store.Identity() + "\x00" + id)
}

// Identify makes sure the engine knows its store's ID: from P when it was
// recorded, else by one read of the store (readers do not name a store:
// one without an ID is used under its key until a writer names it).
func (i *Identity) Identify(ctx context.Context) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.identified {
		return
	}
	if _, _, recorded := i.cached(); recorded && i.now().id != "" {
		i.identified = true
		return
	}
	id, err := remote.ReadStoreID(ctx, i.store)
	if err != nil {
		// The call goes on under the key it has (the URL's own for a
		// store this host never met, which is what a first read of the
		// ID would give it); the operation's own requests report a
		// store that does not answer, and the next call reads again.
		i.log.Warn("cannot read the store ID", "err", err)
		return
	}
	i.identified = true
	if cur := i.now(); id != cur.id {
		i.adopt(id, i.keyFor(id, cur))
	}
}

// adopt switches to store ID id under key and records both in P. The
// caller holds mu. A new key's caches start empty (or as this host left
// them for that store); its probe runs once.
func (i *Identity) adopt(id, key string) {
	k := i.newKeyed(id, key)
	if cur := i.now(); cur.key == key {
		// The same records (a store named now, keyFor): one memory of
		// them, so that calls still running on cur and the next ones
		// check against one highest generation, and its writes (one at a
		// time, never a lower after a higher) stay one writer's, and a
		// long-lived engine's write left for after the reply is not lost.
		k.generations = cur.generations
	}
	i.keyed.Store(k)
	if err := pstate.WriteStoreID(i.private, i.urlKey, id, key); err != nil {
		i.log.Warn("cannot record the store ID", "err", err)
	}
	if i.switched != nil {
		i.switched()
	}
}

// recheck reads the store's ID again and switches to it when it is not
// the one k was built for; it returns the keyed parts to use. A failed
// read keeps k: the caller's own check then decides.
func (i *Identity) recheck(ctx context.Context, k *keyed) *keyed {
	id, err := remote.ReadStoreID(ctx, i.store)
	if err != nil {
		i.log.Warn("cannot read the store ID", "err", err)
		return k
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	i.identified = true
	cur := i.now()
	if id == cur.id {
		return cur
	}
	if cur.id == "" {
		i.log.Info("the store was named by a writer", "storeId", id)
	} else {
		// Another store at the same URL: deleted and started again, or
		// replaced by a copy of a different store.
		i.log.Warn("the store at this URL is not the one this host knew; its records are set aside", "was", cur.id, "now", id)
	}
	i.adopt(id, i.keyFor(id, cur))
	return i.now()
}

// Observe is the remote.Options.Observe hook: it re-checks the store's
// identity when the state read looks like another store's (absent, or
// below the highest generation this host saw for the ID), then checks
// the generation against what this host saw of that store.
func (i *Identity) Observe(ctx context.Context, s remote.State) error {
	k := i.now()
	if s.Generation() == 0 {
		k = i.recheck(ctx, k)
	}
	err := k.generations.Observe(ctx, s)
	if errors.Is(err, remote.ErrGenerationRegressed) && s.Generation() != 0 {
		if nk := i.recheck(ctx, k); nk != k {
			err = nk.generations.Observe(ctx, s)
		}
	}
	return err
}

// Learn records the generation of a state read earlier (publish's, with
// an accepted commit) in what this host saw of the store, without the
// regression check that only a fresh read can make (pstate.Highest.Learn).
func (i *Identity) Learn(s remote.State) {
	i.now().generations.Learn(s)
}

// NameStore gives the store an ID before this engine first publishes to
// it, when it has none (the first publication to a new store, or to one
// an older binary made).
func (i *Identity) NameStore(ctx context.Context) error {
	if i.now().id != "" {
		return nil
	}
	id, err := remote.EnsureStoreID(ctx, i.store)
	if err != nil {
		return err
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	i.identified = true
	if cur := i.now(); cur.id != id {
		i.adopt(id, i.keyFor(id, cur))
	}
	return nil
}
