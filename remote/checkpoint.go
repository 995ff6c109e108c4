package remote

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/noinit"
)

// Checkpoints (DESIGN §5, docs/operations.md).
//
// A checkpoint folds the active chain's increments into one pack holding
// the full closure of a stable prefix: the head the active chain reached
// when the worker read `current` (generation G). Accepted increments never
// change, so the worker builds and uploads the pack without any lock and
// without blocking writers; the pack is only a proposal until the normal
// conditional write of `current` swaps it in:
//
//	new manifest = generation +1, same head,
//	               checkpoint  = the new pack (through G, head of G),
//	               increments  = the observed increments above G,
//	               retained    = [old active chain cut at G] + old retained,
//	                             at most Retained chains.
//
// A lost race re-reads `current` and re-applies the same pack to it: only
// the small manifest is rewritten. Increments accepted meanwhile (above G)
// stay in the new tail. They were built against the old chain, which may
// hold objects the checkpoint does not (content deleted before G and
// restored after it), so before each swap the worker checks that every
// object the new tail's objects name is in the tail or in the checkpoint;
// if not, it builds the pack again with those closures added (rare). When
// the prefix is gone — another checkpoint covers G — the worker stops with
// ErrCheckpointSuperseded and its pack is an orphan for a later cleanup.
//
// Failure anywhere leaves accepted state as it was: nothing but the
// conditional write of `current` changes it, and that write names a pack
// already uploaded.

// DefaultCheckpointPacks and DefaultRetainedCheckpoints are the defaults of
// DESIGN §8 (--checkpoint-packs, --retained-checkpoints).
const (
	DefaultCheckpointPacks     = 1024
	DefaultRetainedCheckpoints = 1
)

// ErrNoCheckpoint: the active chain has fewer increments than
// CheckpointOptions.MinIncrements; nothing was written.
var ErrNoCheckpoint error = noinit.Error("remote: nothing to checkpoint")

// ErrCheckpointSuperseded: another checkpoint covering the prefix was
// swapped in first (or the prefix is no longer in the active chain). The
// uploaded pack is an orphan; accepted state is not affected.
var ErrCheckpointSuperseded error = noinit.Error("remote: checkpoint superseded")

// maxCheckpointBuilds bounds how often one checkpoint is rebuilt because
// the tail needed objects the pack lacked.
const maxCheckpointBuilds = 3

// CheckpointOptions configure one checkpoint.
type CheckpointOptions struct {
	// Retained is how many older chains the new manifest keeps (0..64 in
	// the CLI; at most MaxRetained).
	Retained int
	// MinIncrements: do nothing (ErrNoCheckpoint) while the active chain
	// has fewer increments; values below 1 mean 1.
	MinIncrements int
	// Source reads objects of the active chain, typically a local cache
	// that holds its packs already. Objects it lacks are read from the
	// chain's packs, downloaded once. Nil: download the packs.
	Source cas.Source
	// RetainFor is the retention window by time (--retain): history
	// segments newer than this stay listed even below the oldest kept
	// checkpoint. Zero keeps history by checkpoints only.
	RetainFor time.Duration
}

// CheckpointResult is a checkpoint that was swapped in.
type CheckpointResult struct {
	State      State      // the accepted manifest that names the checkpoint
	Checkpoint Checkpoint // the new active checkpoint
	Pack       []byte     // its bytes, so the caller can keep them in a cache
	Attempts   int        // conditional writes of `current` tried
	Builds     int        // packs built and uploaded (1 unless the tail needed more objects)
}

// Checkpoint builds a checkpoint of the active chain and swaps it in. It
// returns ErrNoCheckpoint when the chain is shorter than MinIncrements,
// ErrCheckpointSuperseded when another checkpoint won, ErrLostRace when
// writers kept winning for every retry; an error never changes accepted
// state.
func (n *Notebook) Checkpoint(ctx context.Context, opts CheckpointOptions) (CheckpointResult, error) {
	if opts.Retained < 0 || opts.Retained > MaxRetained {
		return CheckpointResult{}, fmt.Errorf("remote: retained checkpoints %d outside 0..%d", opts.Retained, MaxRetained)
	}
	state, err := n.ReadCurrent(ctx)
	if err != nil {
		return CheckpointResult{}, err
	}
	if state.Manifest == nil || state.Manifest.ActiveLength() < max(opts.MinIncrements, 1) || len(state.Manifest.Increments) == 0 {
		return CheckpointResult{}, ErrNoCheckpoint
	}
	w := &checkpointWork{n: n, ctx: ctx, state: state, retained: opts.Retained, tail: map[string]*cas.Pack{}}
	w.keepAfter = math.MaxUint64 // no window by time: history goes with its checkpoints
	if opts.RetainFor > 0 {
		w.keepAfter = uint64(max(n.opts.Now().Add(-opts.RetainFor).UnixMilli(), 0))
	}
	w.src = sources{opts.Source, sourceFunc(w.fromPrefixPacks)}
	last := state.Manifest.Increments[len(state.Manifest.Increments)-1]
	w.through, w.head = last.Generation, last.Head

	var res CheckpointResult
	var extra []cas.ID
	for {
		cp, pack, err := w.build(ctx, extra)
		if err != nil {
			return res, err
		}
		res.Builds++
		need, err := w.swap(ctx, &state, cp, pack, &res)
		if err != nil || len(need) == 0 {
			if err == nil {
				res.Checkpoint, res.Pack = cp, pack.data
			}
			return res, err
		}
		if res.Builds >= maxCheckpointBuilds {
			return res, fmt.Errorf("%w: the tail kept needing objects the checkpoint lacks", ErrLostRace)
		}
		extra = append(extra, need...)
	}
}

// checkpointWork is the state of one Checkpoint call.
type checkpointWork struct {
	n         *Notebook
	ctx       context.Context // for the lazy pack downloads of fromPrefixPacks
	state     State           // `current` as first observed: its active chain is what the pack folds
	through   uint64
	head      cas.ID
	retained  int
	keepAfter uint64 // Unix ms: segments newer than this are retained by time
	src       cas.Source

	once    sync.Once
	packs   packSource // the prefix's packs, downloaded on the first miss
	packErr error
	tail    map[string]*cas.Pack // tail packs fetched for the object check, by key
}

// builtPack is an uploaded checkpoint pack and its object set.
type builtPack struct {
	data []byte
	ids  map[cas.ID]bool
}

// fromPrefixPacks reads an object from the prefix's packs, downloading
// them on first use.
func (w *checkpointWork) fromPrefixPacks(id cas.ID) (cas.Object, error) {
	w.once.Do(func() {
		chains, err := w.n.Chains(w.ctx, w.state)
		if err != nil {
			w.packErr = err
			return
		}
		for _, ref := range chains[0].Packs() {
			data, err := w.n.FetchPack(w.ctx, ref)
			if err != nil {
				w.packErr = err
				return
			}
			p, err := cas.OpenPack(data)
			if err != nil {
				w.packErr = fmt.Errorf("remote: pack %s: %w: %w", ref.Key, ErrCorruptPack, err)
				return
			}
			w.packs = append(w.packs, p)
		}
	})
	if w.packErr != nil {
		return cas.Object{}, w.packErr
	}
	return w.packs.Get(id)
}

// build writes the pack (closure of the prefix head plus the closures of
// extra) and uploads it under a fresh publication ID.
func (w *checkpointWork) build(ctx context.Context, extra []cas.ID) (Checkpoint, builtPack, error) {
	pw := cas.NewPackWriter()
	src := append(sources{w.src}, w.tailSource())
	for _, root := range append([]cas.ID{w.head}, extra...) {
		if err := putClosure(src, root, pw); err != nil {
			return Checkpoint{}, builtPack{}, fmt.Errorf("remote: checkpoint through generation %d: %w", w.through, err)
		}
	}
	data, err := pw.Finish()
	if err != nil {
		return Checkpoint{}, builtPack{}, err
	}
	// Re-parse before upload (as Publish does), and keep the object set
	// for tailNeeds: the writer forgets it at Finish.
	opened, err := cas.OpenPack(data)
	if err != nil {
		return Checkpoint{}, builtPack{}, fmt.Errorf("remote: checkpoint pack does not open: %w", err)
	}
	ids := make(map[cas.ID]bool, opened.Len())
	for _, id := range opened.IDs() {
		ids[id] = true
	}
	pub := NewUUIDv7()
	cp := Checkpoint{
		Pack:        PackRef{Key: CheckpointKey(w.through, pub), Sum: cas.Sum(data), Size: int64(len(data))},
		Head:        w.head,
		Through:     w.through,
		Publication: pub,
	}
	if err := w.n.store.Put(ctx, cp.Pack.Key, data); err != nil {
		return Checkpoint{}, builtPack{}, fmt.Errorf("remote: upload checkpoint: %w", err)
	}
	return cp, builtPack{data: data, ids: ids}, nil
}

func (w *checkpointWork) tailSource() cas.Source {
	var ps packSource
	for _, p := range w.tail {
		ps = append(ps, p)
	}
	return ps
}

// swap re-applies the checkpoint to state until the conditional write
// succeeds, the prefix is gone, or the tail needs objects the pack lacks
// (returned as need). state is updated to the last observed `current`.
func (w *checkpointWork) swap(ctx context.Context, state *State, cp Checkpoint, pack builtPack, res *CheckpointResult) (need []cas.ID, err error) {
	for {
		res.Attempts++
		next, need, err := w.apply(ctx, *state, cp, pack)
		if err != nil || len(need) > 0 {
			return need, err
		}
		data := encodeManifest(next) // SwapCheckpoint validated it
		etag, err := w.n.store.ReplaceIfMatch(ctx, CurrentKey, data, state.ETag)
		switch {
		case err == nil:
			res.State = State{Manifest: next, ETag: etag}
			return nil, nil
		case errors.Is(err, ErrPrecondition):
			// Lost to a writer (or another checkpoint): re-read, re-apply.
		case errors.Is(err, ErrUnavailable), errors.Is(err, ErrAccessDenied), errors.Is(err, ErrInvalidKey):
			return nil, fmt.Errorf("remote: swap in checkpoint: %w", err)
		default:
			// Ambiguous: the re-read below tells whether ours landed.
		}
		if errors.Is(err, ErrPrecondition) && res.Attempts <= w.n.opts.Retries {
			if err := w.n.opts.Sleep(ctx, w.n.backoff(res.Attempts, 0)); err != nil {
				return nil, err
			}
		}
		cur, rerr := w.n.ReadCurrent(ctx)
		if rerr != nil {
			return nil, rerr
		}
		if cur.Manifest != nil && cur.Manifest.Checkpoint.Publication == cp.Publication {
			res.State = cur // an ambiguous write that landed
			return nil, nil
		}
		if res.Attempts > w.n.opts.Retries {
			return nil, fmt.Errorf("%w: checkpoint after %d attempts: %w", ErrLostRace, res.Attempts, err)
		}
		*state = cur
	}
}

// apply returns the manifest that swaps cp into state, or the objects the
// tail needs that neither the tail nor the pack holds.
func (w *checkpointWork) apply(ctx context.Context, state State, cp Checkpoint, pack builtPack) (*Manifest, []cas.ID, error) {
	m := state.Manifest
	if m == nil {
		return nil, nil, fmt.Errorf("%w: current is gone", ErrCheckpointSuperseded)
	}
	if m.Checkpoint.Through >= w.through {
		return nil, nil, fmt.Errorf("%w: the active checkpoint covers generation %d", ErrCheckpointSuperseded, m.Checkpoint.Through)
	}
	// SwapCheckpoint refuses a checkpoint that does not end at an active
	// increment with our head: the prefix is gone.
	var next *Manifest
	var err error
	if m.Version >= 2 {
		next, err = m.swapCheckpointV2(cp, w.retained, w.keepAfter)
	} else {
		next, err = m.SwapCheckpoint(cp, w.retained)
	}
	if errors.Is(err, ErrGenerationOverflow) {
		return nil, nil, err
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%w: generation %d is not in the active chain: %w", ErrCheckpointSuperseded, w.through, err)
	}
	tail := next.Increments
	if next.Version >= 2 {
		// The increments above the checkpoint, some perhaps folded into
		// segments while the pack was built.
		if tail, err = w.n.Publications(ctx, State{Manifest: next}, w.through+1, next.Generation); err != nil {
			return nil, nil, err
		}
	}
	need, err := w.tailNeeds(ctx, tail, pack.ids)
	if err != nil || len(need) > 0 {
		return nil, need, err
	}
	return next, nil, nil
}

// tailNeeds returns every object named by an object of the tail's packs
// that is neither in those packs nor in the checkpoint. The checkpoint is
// closed under references, so when this is empty the closure of every
// tail head is complete in the new chain.
func (w *checkpointWork) tailNeeds(ctx context.Context, tail []Increment, cp map[cas.ID]bool) ([]cas.ID, error) {
	if len(tail) == 0 {
		return nil, nil
	}
	var packs []*cas.Pack
	have := map[cas.ID]bool{}
	for _, inc := range tail {
		p := w.tail[inc.Pack.Key]
		if p == nil {
			data, err := w.n.FetchPack(ctx, inc.Pack)
			if err != nil {
				return nil, err
			}
			if p, err = cas.OpenPack(data); err != nil {
				return nil, fmt.Errorf("remote: pack %s: %w: %w", inc.Pack.Key, ErrCorruptPack, err)
			}
			w.tail[inc.Pack.Key] = p
		}
		packs = append(packs, p)
		for _, id := range p.IDs() {
			have[id] = true
		}
	}
	var need []cas.ID
	for _, p := range packs {
		for _, id := range p.IDs() {
			o, err := p.Get(id)
			if err != nil {
				return nil, fmt.Errorf("remote: tail pack: %w: %w", ErrCorruptPack, err)
			}
			refs, err := objectRefs(o)
			if err != nil {
				return nil, fmt.Errorf("remote: tail pack: %w: %w", ErrCorruptPack, err)
			}
			for _, r := range refs {
				if !have[r] && !cp[r] {
					have[r] = true // ask once
					need = append(need, r)
				}
			}
		}
	}
	return need, nil
}
