package remote

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
)

// State is an observed `current`: the manifest (nil for the empty notebook
// at generation 0) and the ETag a conditional replace must match ("" when
// `current` is absent).
type State struct {
	Manifest *Manifest
	ETag     string
}

// Generation returns the accepted generation (0 for the empty notebook).
func (s State) Generation() uint64 {
	if s.Manifest == nil {
		return 0
	}
	return s.Manifest.Generation
}

// Head returns the accepted head commit (zero for the empty notebook).
func (s State) Head() cas.ID {
	if s.Manifest == nil {
		return cas.ID{}
	}
	return s.Manifest.Head
}

// NoRetries as Options.Retries makes the first lost race final.
const NoRetries = -1

// Options configure a Notebook. A field's zero value is its default, stated
// on the field; "none" where the default is something has a name
// (NoRetries), the convention server.Config follows too.
type Options struct {
	Retries   int           // lost-race retries after the first attempt (default 8; NoRetries for none)
	FirstWait time.Duration // first backoff ceiling (default 25ms)
	MaxWait   time.Duration // backoff cap (default 2s)

	// Sleep waits d or until ctx is done (default: a timer). Tests inject
	// a fake clock here.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock that measures an attempt's window (default
	// time.Now).
	Now func() time.Time
	// Rand is the jitter source (default: the runtime's random source).
	Rand rand.Source
	// Observe, if set, is called with every state ReadCurrent decodes
	// (Publish's and Checkpoint's re-reads included) and with every state
	// Publish created; an error it returns is ReadCurrent's. The engine uses it to refuse a store whose
	// generation went backwards (server/pstate/highest.go).
	Observe func(ctx context.Context, s State) error
	// CheckpointPacks is the writer's checkpoint interval, the packs of
	// CheckpointDueV4 (0: DefaultCheckpointPacks). A rollup builder
	// reads it to know where a checkpoint may still land, and so which
	// smaller blocks a climb from it will need (RollupLevelsBuiltV4).
	CheckpointPacks int
}

// Defaults of Options (DESIGN §5).
const (
	DefaultRetries   = 8
	DefaultFirstWait = 25 * time.Millisecond
	DefaultMaxWait   = 2 * time.Second
)

// Notebook runs the publication protocol on one store. It is safe for
// concurrent use.
type Notebook struct {
	store    Store
	opts     Options
	rmu      sync.Mutex // guards opts.Rand, which need not be concurrency-safe
	segments segmentCache
	readRTT  atomic.Int64 // nanoseconds of the last GET of `current` (rollup.go's freshness)
}

// Open returns the Notebook on store.
func Open(store Store, opts Options) *Notebook {
	switch {
	case opts.Retries == 0:
		opts.Retries = DefaultRetries
	case opts.Retries < 0:
		opts.Retries = 0
	}
	if opts.FirstWait <= 0 {
		opts.FirstWait = DefaultFirstWait
	}
	if opts.MaxWait <= 0 {
		opts.MaxWait = DefaultMaxWait
	}
	if opts.MaxWait < opts.FirstWait {
		opts.MaxWait = opts.FirstWait
	}
	if opts.Sleep == nil {
		opts.Sleep = Sleep
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.CheckpointPacks <= 0 {
		opts.CheckpointPacks = DefaultCheckpointPacks
	}
	return &Notebook{store: store, opts: opts}
}

// Store returns the store the notebook runs on.
func (n *Notebook) Store() Store { return n.store }

// Sleep waits d on the wall clock, or until ctx ends (then ctx's error):
// Options.Sleep's default, and the engine's where no clock is configured.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ReadCurrent reads and strictly decodes `current`. An absent `current` is
// the empty notebook (State{}); an undecodable one wraps ErrCorruptManifest.
// A version-4 `current` is returned as its read-only view (view_v4.go).
func (n *Notebook) ReadCurrent(ctx context.Context) (State, error) {
	t0 := n.opts.Now()
	data, etag, err := n.store.Get(ctx, CurrentKey)
	n.readRTT.Store(int64(n.opts.Now().Sub(t0)))
	if errors.Is(err, ErrNotFound) {
		return n.observe(ctx, State{})
	}
	if err != nil {
		return State{}, fmt.Errorf("remote: read current: %w", err)
	}
	v4, m, err := DecodeCurrent(data)
	if err != nil {
		return State{}, fmt.Errorf("remote: read current: %w", err)
	}
	if v4 != nil {
		m = viewV4(v4)
	}
	return n.observe(ctx, State{Manifest: m, ETag: etag})
}

func (n *Notebook) observe(ctx context.Context, s State) (State, error) {
	if n.opts.Observe == nil {
		return s, nil
	}
	if err := n.opts.Observe(ctx, s); err != nil {
		return State{}, err
	}
	return s, nil
}

// FetchPack downloads a pack and returns it only if its size and BLAKE3
// match ref (a version-4 proposal: the pack inside it, checked against
// its own descriptor). A pack the store does not have wraps ErrMissingPack (and
// ErrNotFound); one that does not match wraps ErrCorruptPack. Both wrap
// ErrIntegrity: the manifest promised the pack.
func (n *Notebook) FetchPack(ctx context.Context, ref PackRef) ([]byte, error) {
	data, _, err := n.store.Get(ctx, ref.Key)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, fmt.Errorf("remote: pack %s named by current: %w: %w", ref.Key, ErrMissingPack, err)
	case err != nil:
		return nil, fmt.Errorf("remote: fetch pack %s: %w", ref.Key, err)
	case isProposalKey(ref.Key):
		return unwrapProposal(ref, data)
	case int64(len(data)) != ref.Size:
		return nil, fmt.Errorf("remote: pack %s: %w: %d bytes, manifest says %d", ref.Key, ErrCorruptPack, len(data), ref.Size)
	case cas.Sum(data) != ref.Sum:
		return nil, fmt.Errorf("remote: pack %s: %w: BLAKE3 does not match the manifest", ref.Key, ErrCorruptPack)
	}
	return data, nil
}

// backoff returns the wait before retry number attempt (1-based): full
// jitter below a ceiling that doubles up to MaxWait, so racing writers
// spread out instead of colliding again in lockstep. The first ceiling is
// FirstWait or the lost attempt's window (from reading `current` to
// learning of the loss), whichever is longer: when every writer's attempt
// takes a long time (many writers sharing a few cores), retries spaced by
// less than one attempt would all overlap and lose again.
func (n *Notebook) backoff(attempt int, window time.Duration) time.Duration {
	ceiling := max(n.opts.FirstWait, min(window, n.opts.MaxWait))
	for i := 1; i < attempt && ceiling < n.opts.MaxWait; i++ {
		ceiling *= 2
	}
	ceiling = min(ceiling, n.opts.MaxWait)
	var r uint64
	if n.opts.Rand != nil {
		n.rmu.Lock()
		r = n.opts.Rand.Uint64()
		n.rmu.Unlock()
	} else {
		r = rand.Uint64()
	}
	return time.Duration(r % uint64(ceiling))
}
