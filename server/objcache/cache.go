package objcache

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/parallel"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/pstate"
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

// Caches are the object caches of one store, as one engine opens them.
// It is safe for concurrent use.
type Caches struct {
	notebook *remote.Notebook
	log      *slog.Logger
	storeDir func() string // P/stores/<key> of the store as last identified
	// oldestBaseline returns the lowest generation of the baselines in P
	// (false when there is none): pruning keeps the caches they need.
	oldestBaseline func() (uint64, bool)

	mu   sync.Mutex
	open map[string]*Chain // open caches by chain key
}

// New returns the caches of the store notebook reads, kept under
// storeDir()/chains; storeDir is called on every use, since the engine
// re-keys its directory when the store turns out to be another.
// oldestBaseline reports the oldest generation a baseline in P records.
func New(notebook *remote.Notebook, log *slog.Logger, storeDir func() string, oldestBaseline func() (uint64, bool)) *Caches {
	return &Caches{notebook: notebook, log: log, storeDir: storeDir, oldestBaseline: oldestBaseline, open: map[string]*Chain{}}
}

// Close closes every open cache.
func (cs *Caches) Close() error {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	var first error
	for k, c := range cs.open {
		if err := c.close(); err != nil && first == nil {
			first = err
		}
		delete(cs.open, k)
	}
	return first
}

// FetchError is a failure to fetch a pack from the store or to keep it
// in a cache: the manifest naming it was fine, so the failure is the
// pack's (or the store's).
type FetchError struct{ Err error }

func (e *FetchError) Error() string { return e.Err.Error() }
func (e *FetchError) Unwrap() error { return e.Err }

// Chain is one open cache directory.
type Chain struct {
	caches *Caches
	key    string
	store  *cas.Store

	mu    sync.Mutex
	reach uint64 // what this process knows the cache reaches (see Reach)
}

// Store is the cache's pack store.
func (c *Chain) Store() *cas.Store { return c.store }

func (c *Chain) close() error { return c.store.Close() }

// Key names the cache of the chain state belongs to.
func Key(state remote.State) string {
	if state.Manifest == nil {
		return "empty"
	}
	m := state.Manifest
	if m.Version >= 2 {
		return KeyAt(m.Checkpoint)
	}
	return KeyOf(m.Active())
}

// KeyAt names the cache of the version-2 chain based on checkpoint
// cp: the generation it reaches and the hash of its pack key.
func KeyAt(cp remote.Checkpoint) string {
	first := "genesis"
	if !cp.IsGenesis() {
		first = cp.Pack.Key
	}
	return strconv.FormatUint(cp.Through, 10) + "-" + pstate.HashKey(first)
}

// KeyOf names the cache of version-1 chain c: the generation its
// checkpoint reaches (so caches order by age without a manifest, see
// prune.go) and the hash of its first pack.
func KeyOf(c remote.Chain) string {
	packs := c.Packs()
	if len(packs) == 0 {
		return "empty"
	}
	return strconv.FormatUint(c.Checkpoint.Through, 10) + "-" + pstate.HashKey(packs[0].Key)
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

// PackName is the name under which a cache keeps the pack ref names.
func PackName(ref remote.PackRef) string { return pstate.HashKey(ref.Key) + ".pack" }

// pstate.HashKey(key) + ".pack" is also the cached name of a rollup (sync).

// Dir is the directory holding the chain caches: P/stores/<key>/chains.
func (cs *Caches) Dir() string { return filepath.Join(cs.storeDir(), "chains") }

// Open returns the (memoised) cache named key.
func (cs *Caches) Open(key string) (*Chain, error) {
	c, _, err := cs.openCreated(key)
	return c, err
}

// openCreated is Open, also reporting whether the cache
// directory was created now (the first sight of a chain in this P).
func (cs *Caches) openCreated(key string) (*Chain, bool, error) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if c := cs.open[key]; c != nil {
		return c, false, nil
	}
	dir := filepath.Join(cs.Dir(), key)
	_, err := os.Stat(dir)
	created := errors.Is(err, fs.ErrNotExist)
	s, err := cas.OpenStore(dir)
	if err != nil {
		return nil, false, err
	}
	c := &Chain{caches: cs, key: key, store: s}
	cs.open[key] = c
	return c, created, nil
}

// openOf opens the cache of state's chain. The first sight of a
// chain in this P means a checkpoint was swapped in: the caches of chains
// the manifest no longer names are then removed (prune.go).
func (cs *Caches) openOf(state remote.State) (*Chain, error) {
	c, created, err := cs.openCreated(Key(state))
	// A chain's cache may be created before any sync sees the chain (a
	// v4 checkpoint's pre-fill, a writer keeping its own proposal), so
	// its first sync (nothing reached yet) prunes too.
	if err == nil && (created || (c.known() == 0 && c.Reach() == 0)) {
		cs.prune(state)
	}
	return c, err
}

// fetchParallel bounds concurrent pack downloads: enough to hide latency
// on a cold pull, few enough not to flood a small store.
const fetchParallel = 8

// BundleBytes bounds the fetched bytes sync holds before keeping them:
// a sync whose packs are larger (a cold pull of a big notebook) writes a
// bundle per this many bytes instead of holding them all in memory. A
// variable for tests.
var BundleBytes = 64 << 20

// The reach of a chain cache is the generation whose head's closure it
// holds (and, in a chain started before the store's upgrade to version 2,
// every increment pack up to it): sync then needs only what
// remote.CatchUp plans for (reach, generation], a few rollups and
// increments, never the whole chain. It is recorded beside the cache
// (reach/<key>, a sealed record: pstate.Seal) after the packs are kept, so
// processes sharing P share it; a reach below the chain's checkpoint means
// "nothing yet". A process reads the record only while what it read or
// recorded itself (known) is behind the state it syncs to: the record
// can only raise a process's reach.
// Healing the cache forgets it (forgetReach).

func (c *Chain) reachFile() string { return filepath.Join(c.caches.storeDir(), "reach", c.key) }

// Reach returns the cache's reach, refreshing the cas store when another
// process advanced it. The file records the generation and its head; a
// cache that lacks that head (a crash lost packs the file outlived: cache
// writes are not fsynced) does not reach it.
func (c *Chain) Reach() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	data, err := os.ReadFile(c.reachFile())
	if err != nil {
		return c.reach
	}
	f, ok := pstate.Unseal(data, 2)
	if !ok {
		return c.reach
	}
	r, err1 := strconv.ParseUint(f[0], 10, 64)
	head, err2 := cas.ParseID(f[1])
	if err1 != nil || err2 != nil || r <= c.reach {
		return c.reach
	}
	if !c.store.Has(head) {
		if err := c.store.Refresh(); err != nil || !c.store.Has(head) {
			return c.reach
		}
	}
	c.reach = r
	return c.reach
}

// known is the reach this process has read or recorded, without reading
// the shared record: Reach never returns less, so a caller that only asks
// whether the cache reaches some generation, and finds that it does, need
// not open the file (a commit asked about 7 times per call).
func (c *Chain) known() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reach
}

// SetReach records that the cache reaches generation r, whose head is
// head (never lowers it).
func (c *Chain) SetReach(r uint64, head cas.ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r <= c.reach {
		return
	}
	c.reach = r
	if err := pstate.Overwrite(c.reachFile(), pstate.Seal(fmt.Sprintf("%020d", r), head.String())); err != nil {
		c.caches.log.Warn("cannot record the object cache's reach", "err", err)
	}
}

// forgetReach makes the next sync of c fetch its chain again (after
// healing removed packs from it).
func (c *Chain) forgetReach() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reach = 0
	if err := os.Remove(c.reachFile()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		c.caches.log.Warn("cannot forget the object cache's reach", "err", err)
	}
}

// Sync makes the cache of state's chain hold the closure of state's head:
// the checkpoint's pack if the cache has not reached it, then the catch-up
// remote.CatchUp plans from the cache's reach, downloaded in parallel.
// Each pack is verified (increments by size and BLAKE3 in remote, every
// pack's trailer, index and objects by cas) before it is kept. The packs
// of one sync are kept in one file (a cas bundle, up to BundleBytes):
// creating a file costs far more than writing its bytes. A failure to
// fetch or keep a pack is a *FetchError.
func (cs *Caches) Sync(ctx context.Context, state remote.State) (*Chain, error) {
	c, err := cs.openOf(state)
	if err != nil {
		return nil, err
	}
	m := state.Manifest
	if m == nil || c.known() >= m.Generation {
		return c, nil // already reached: the shared record is not read
	}
	reach := c.Reach()
	if reach >= m.Generation {
		return c, nil
	}
	through := m.Checkpoint.Through
	if reach < through || (reach == 0 && through == 0) {
		reach = through
		if !m.Checkpoint.IsGenesis() && !c.store.HasPack(PackName(m.Checkpoint.Pack)) {
			if err := c.store.Refresh(); err != nil {
				return nil, err
			}
			if !c.store.HasPack(PackName(m.Checkpoint.Pack)) {
				data, err := cs.notebook.FetchPack(ctx, m.Checkpoint.Pack)
				if err == nil {
					err = c.store.AddPack(PackName(m.Checkpoint.Pack), data)
				}
				if err != nil {
					return nil, &FetchError{err}
				}
			}
		}
	}
	var mu sync.Mutex
	var pending []cas.NamedPack
	pendingBytes := 0
	keep := func(got []remote.CaughtUpPack) error {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range got {
			pending = append(pending, cas.NamedPack{Name: pstate.HashKey(p.Key) + ".pack", Data: p.Data})
			pendingBytes += len(p.Data)
			if pendingBytes >= BundleBytes {
				full := pending
				pending, pendingBytes = nil, 0
				if err := c.store.AddPacks(full); err != nil {
					return err
				}
			}
		}
		return nil
	}
	have := func(key string) bool { return c.store.HasPack(pstate.HashKey(key) + ".pack") }
	if m.V4 != nil {
		err = cs.catchUpV4(ctx, state, reach, c.store.Has, have, keep)
	} else {
		_, err = cs.notebook.CatchUp(ctx, state, reach, fetchParallel, have, keep)
	}
	// What was fetched is kept even if another pack failed: the next sync
	// need not download it again (it is found by the objects it holds).
	if aerr := c.store.AddPacks(pending); aerr != nil && err == nil {
		err = aerr
	}
	if err != nil {
		return nil, &FetchError{err}
	}
	c.SetReach(m.Generation, m.Head)
	return c, nil
}

// catchUpV4 is Sync's catch-up on a version-4 store, by the plan of
// remote.PlanCatchUpV4: the rollups `current` lists (each one GET for a
// whole block), and for the generations no listed rollup holds the packs
// of each (its proposal's and, re-parented, its group's; the increments
// of a version-3 history before the upgrade as they are), all
// downloaded in parallel. A rollup stores trees as deltas of the trees
// at its block's start; one whose bases the cache does not hold (nor a
// pack before it in this catch-up: a reader inside the block that never
// read its start), or one gone from the store (cleanup removed it since
// `current` was read), is replaced by the block's generations after
// reach.
// The next sync starts from the new reach.
func (cs *Caches) catchUpV4(ctx context.Context, state remote.State, reach uint64, held func(cas.ID) bool, have func(string) bool, keep func([]remote.CaughtUpPack) error) error {
	m := state.Manifest
	seen := map[string]bool{}
	// fetch downloads the packs of a plan, in its order.
	fetch := func(plan []remote.CoverV4) ([]remote.CaughtUpPack, []*remote.RollupRef, error) {
		var refs []remote.PackRef
		var rolls []*remote.RollupRef
		add := func(ref remote.PackRef, r *remote.RollupRef) {
			if !seen[ref.Key] && !have(ref.Key) {
				seen[ref.Key] = true
				refs, rolls = append(refs, ref), append(rolls, r)
			}
		}
		for _, step := range plan {
			if step.Rollup != nil {
				add(remote.PackRef{Key: step.Rollup.Key()}, step.Rollup)
				continue
			}
			incs, err := cs.notebook.Publications(ctx, state, max(step.First, reach+1), step.Last)
			if err != nil {
				return nil, nil, err
			}
			for _, ref := range (remote.Chain{Increments: incs}).Packs() {
				add(ref, nil)
			}
		}
		got := make([]remote.CaughtUpPack, len(refs))
		err := parallel.For(len(refs), fetchParallel, func(i int) error {
			var data []byte
			var err error
			if r := rolls[i]; r != nil {
				data, err = cs.notebook.FetchRollupV4(ctx, *r)
				if errors.Is(err, remote.ErrNotFound) {
					data, err = nil, nil // removed since `current` was read: its generations instead
				}
			} else {
				data, err = cs.notebook.FetchPack(ctx, refs[i])
			}
			got[i] = remote.CaughtUpPack{Key: refs[i].Key, Data: data}
			return err
		})
		return got, rolls, err
	}
	got, rolls, err := fetch(remote.PlanCatchUpV4(m.V4, reach))
	if err != nil {
		// What arrived is kept: the next sync need not download it again.
		if kerr := keep(arrived(got, held)); kerr != nil {
			cs.log.Warn("cannot keep the packs a failed catch-up fetched", "err", kerr)
		}
		return err
	}
	known := map[cas.ID]bool{} // the trees of the packs taken so far
	var out []remote.CaughtUpPack
	for i, pk := range got {
		var p *cas.Pack
		if pk.Data != nil {
			if p, err = cas.OpenPack(pk.Data); err != nil {
				return fmt.Errorf("%w: %s: %w", remote.ErrCorruptPack, pk.Key, err)
			}
		}
		if r := rolls[i]; r != nil && (p == nil || slices.ContainsFunc(p.Bases(), func(b cas.ID) bool { return !known[b] && !held(b) })) {
			more, _, err := fetch([]remote.CoverV4{{First: r.First, Last: r.First + 1<<r.Level - 1}})
			if err != nil {
				return err
			}
			out = append(out, more...)
			for _, mp := range more {
				if q, err := cas.OpenPack(mp.Data); err == nil {
					for _, id := range q.IDs() {
						known[id] = true
					}
				}
			}
			continue
		}
		for _, id := range p.IDs() {
			known[id] = true
		}
		out = append(out, pk)
	}
	// The generations proposals' deltas are based on, below reach too (a
	// proposal built before the active checkpoint and accepted after it).
	fetchGen := func(g uint64) ([]remote.CaughtUpPack, error) {
		incs, err := cs.notebook.Publications(ctx, state, g, g)
		if err != nil {
			return nil, err
		}
		var got []remote.CaughtUpPack
		for _, ref := range (remote.Chain{Increments: incs}).Packs() {
			if seen[ref.Key] || have(ref.Key) {
				continue
			}
			seen[ref.Key] = true
			data, err := cs.notebook.FetchPack(ctx, ref)
			if err != nil {
				return nil, err
			}
			got = append(got, remote.CaughtUpPack{Key: ref.Key, Data: data})
		}
		return got, nil
	}
	out, err = withProposalBases(out, known, held, fetchGen)
	if err != nil {
		return err
	}
	return keep(out)
}

// arrived returns the packs of got that were fetched and can be kept: a
// pack whose trees are deltas only once what they are deltas of is held
// or among the packs taken (in passes, since one may be the base of
// another).
func arrived(got []remote.CaughtUpPack, held func(cas.ID) bool) []remote.CaughtUpPack {
	known := map[cas.ID]bool{}
	var out []remote.CaughtUpPack
	left := map[int]*cas.Pack{}
	for i, pk := range got {
		if pk.Data == nil {
			continue
		}
		if p, err := cas.OpenPack(pk.Data); err == nil {
			left[i] = p
		}
	}
	for progress := true; progress; {
		progress = false
		for i, p := range left {
			if slices.ContainsFunc(p.Bases(), func(b cas.ID) bool { return !known[b] && !held(b) }) {
				continue
			}
			for _, id := range p.IDs() {
				known[id] = true
			}
			out = append(out, got[i])
			delete(left, i)
			progress = true
		}
	}
	return out
}

// withProposalBases adds to out what its proposals' trees are deltas of:
// a proposal stores its trees as deltas of the tree of the generation it
// was built on, which a catch-up through rollups skips when the proposal
// waited (built on 14, accepted at 17, after a rollup of 9..16 that holds
// 16's tree only). The packs of that generation go first, so any bundle
// that holds a proposal holds its bases too; they may be deltas in turn,
// so it repeats until every base is held or known (at most one round per
// generation). A fold puts a re-parented proposal's bases in its group
// pack (publish/fold.go), which the catch-up takes with the proposal: this
// fetches only for a group pack written before folds did.
func withProposalBases(out []remote.CaughtUpPack, known map[cas.ID]bool, held func(cas.ID) bool,
	fetchGen func(g uint64) ([]remote.CaughtUpPack, error)) ([]remote.CaughtUpPack, error) {
	missing := func(p *cas.Pack) bool {
		return slices.ContainsFunc(p.Bases(), func(b cas.ID) bool { return !known[b] && !held(b) })
	}
	for range 64 {
		var more []remote.CaughtUpPack
		for _, pk := range out {
			kind, g, _, _, _ := remote.ParseProposalEntry(pk.Key)
			if kind != remote.EntryProposal || g == 0 {
				continue
			}
			if p, err := cas.OpenPack(pk.Data); err == nil && missing(p) {
				got, err := fetchGen(g)
				if err != nil {
					return nil, err
				}
				more = append(more, got...)
			}
		}
		if len(more) == 0 {
			return out, nil // nothing more to fetch: adding the packs reports what is missing
		}
		for _, mp := range more {
			if q, err := cas.OpenPack(mp.Data); err == nil {
				for _, id := range q.IDs() {
					known[id] = true
				}
			}
		}
		out = append(more, out...)
	}
	return out, nil
}

// Fill makes the cache of state's chain hold every pack of the chain
// (the checkpoint and every increment above it), as a version-1 cache did:
// what reading history needs (older commits and trees), which a catch-up
// through rollups skips. Log calls it only when an object is missing.
func (cs *Caches) Fill(ctx context.Context, state remote.State, c *Chain) error {
	return cs.FillFrom(ctx, state, c, 0)
}

// FillFrom is Fill for the generations from from on only (and
// the checkpoint's pack): a fold needs the trees of the generations its
// pending proposals were built on, at most K before the state, which a
// catch-up through rollups skips (a rollup holds its block's end only).
func (cs *Caches) FillFrom(ctx context.Context, state remote.State, c *Chain, from uint64) error {
	m := state.Manifest
	if m == nil {
		return nil
	}
	incs, err := cs.notebook.Publications(ctx, state, max(m.Checkpoint.Through+1, from), m.Generation)
	if err != nil {
		return err
	}
	// The chain's packs: the checkpoint's, each increment's and (format
	// v4) each group pack, once.
	refs := remote.Chain{Checkpoint: m.Checkpoint, Increments: incs}.Packs()
	missing := MissingPacks(c.store, refs)
	if len(missing) == 0 {
		return nil
	}
	packs := make([]cas.NamedPack, len(missing))
	errs := make([]error, len(missing))
	_ = parallel.For(len(missing), fetchParallel, func(i int) error {
		data, err := cs.notebook.FetchPack(ctx, missing[i])
		packs[i], errs[i] = cas.NamedPack{Name: PackName(missing[i]), Data: data}, err
		return nil // every fetch is tried: what arrived is kept below
	})
	var got []cas.NamedPack
	var first error
	for i := range packs {
		if errs[i] != nil {
			first = cmp.Or(first, errs[i])
			continue
		}
		got = append(got, packs[i])
	}
	if err := c.store.AddPacks(got); err != nil && first == nil {
		first = err
	}
	return first
}

// MissingPacks returns the packs of refs the cache store does not hold.
func MissingPacks(store *cas.Store, refs []remote.PackRef) []remote.PackRef {
	var missing []remote.PackRef
	for _, ref := range refs {
		if !store.HasPack(PackName(ref)) {
			missing = append(missing, ref)
		}
	}
	return missing
}
