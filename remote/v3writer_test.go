package remote

// A version-3 writer, for tests only: format version 4 is the only one
// the engine writes (package publish), but the readers of versions 1–3
// (catch-up, history, verify, checkpoints of a v3 chain) are tested on
// stores these tests build generation by generation, beyond what the
// fixture stores in testdata hold. This is the plain version-3 path as
// binaries before version 4 ran it: read `current`, build, upload the
// pack, replace `current` conditionally, retry after a lost race.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
)

// Proposal is what one publication attempt wants accepted.
type Proposal struct {
	Pack []byte // a complete pack holding every object the new head needs that the chain lacks
	Head cas.ID // the new head commit; its parent must be the observed head
	Skip bool   // nothing to publish: the observed state is already the result
	// Ready, when set, is called before the conditional write that could
	// accept the proposal, and that write is made only if it returns nil
	// (its error is returned as it is). The caller's durable preparations
	// (a pending record) then overlap the pack upload.
	Ready func() error
}

// Accepted is the outcome of a successful publication.
//
// State is the state this publication created. When acceptance was proved
// by re-reading `current` after an ambiguous reply and later publications
// had already been accepted on top, State.ETag is "" (the ETag of our
// version is unknowable): it must not be used for a conditional write —
// callers re-read `current` before their next publication anyway.
type Accepted struct {
	State       State
	Publication string
	Attempts    int
	Published   bool // false when the final proposal was Skip
}

// errNotAccepted marks an attempt that did not change `current`: a lost
// race, or an ambiguous write proved not (yet) applied. Publish retries it.
var errNotAccepted = errors.New("remote: not accepted")

// ErrStale may be returned by a Publish build function whose observed
// state names a pack the store no longer has: when `current` has moved
// since, Publish re-reads it and builds again (counted as a lost race);
// otherwise the error is returned as it is.
var ErrStale = errors.New("remote: the observed state is outdated")

// resolveTimeout bounds the re-reads that decide an ambiguous write. They
// run even if the caller's context is cancelled: the caller must learn
// whether its change was accepted.
const resolveTimeout = 30 * time.Second

// Publish runs the protocol: it calls build with the latest accepted state
// and a fresh publication ID, uploads the proposal's pack, and replaces
// `current` conditionally. A lost race re-reads `current` and calls build
// again after a jittered backoff; an ambiguous replace is resolved by
// re-reading `current` and looking for the publication ID. It returns
// Accepted only when acceptance is proved; ErrLostRace when retries run
// out; ErrAmbiguous when acceptance could not be decided.
//
// Every attempt has a publication ID of its own, so a late arrival of an
// earlier attempt's write and a retry can never both name one ID: at most
// one of them wins (the store lets one write conditional on an ETag
// succeed), and the loser's next build finds the change already there.
//
// Errors from build are returned unchanged. A store error during upload or
// an unambiguous store error on the replace (unreachable, access denied)
// is returned wrapped: nothing was accepted, at most an unreferenced pack
// is left behind. An error matching ErrAmbiguous may also match the
// sentinel of its cause, so callers test ErrAmbiguous first.
func (n *Notebook) Publish(ctx context.Context, build func(ctx context.Context, observed State, publication string) (Proposal, error)) (Accepted, error) {
	state, err := n.ReadCurrent(ctx)
	if err != nil {
		return Accepted{}, err
	}
	read := n.opts.Now()
	for attempt := 1; ; attempt++ {
		pub := NewUUIDv7()
		prop, err := build(ctx, state, pub)
		if errors.Is(err, ErrStale) && attempt <= n.opts.Retries && n.moved(ctx, state) {
			// A pack the observed manifest named is gone because `current`
			// moved on (a cleanup after a checkpoint): like a lost race.
			err = fmt.Errorf("%w: %w", errNotAccepted, err)
		} else if err != nil {
			return Accepted{}, err
		}
		var next State
		switch {
		case err != nil: // stale: retried below
		case prop.Skip:
			return Accepted{State: state, Attempts: attempt}, nil
		case attempt > 1 && n.moved(ctx, state):
			err = fmt.Errorf("%w: current moved past generation %d while the retry was built: %w", errNotAccepted, state.Generation(), ErrPrecondition)
		default:
			next, err = n.attempt(ctx, state, pub, prop)
		}
		if err == nil {
			if n.opts.Observe != nil {
				_ = n.opts.Observe(ctx, State{Manifest: next.Manifest}) // only records it: it is newer than anything read
			}
			return Accepted{State: next, Publication: pub, Attempts: attempt, Published: true}, nil
		}
		if !errors.Is(err, errNotAccepted) {
			return Accepted{}, err
		}
		if attempt > n.opts.Retries {
			return Accepted{}, fmt.Errorf("%w: %d attempts: %w", ErrLostRace, attempt, err)
		}
		if err := n.opts.Sleep(ctx, n.backoffAfter(attempt, read, err)); err != nil {
			return Accepted{}, err
		}
		if state, err = n.ReadCurrent(ctx); err != nil {
			return Accepted{}, err
		}
		read = n.opts.Now()
	}
}

// backoffAfter is the wait before the retry after attempt, whose window
// began at read, lost with the error lost.
func (n *Notebook) backoffAfter(attempt int, read time.Time, lost error) time.Duration {
	window := n.opts.Now().Sub(read)
	if errors.Is(lost, ErrRateLimited) {
		// The store refused the write because `current` was written
		// within its per-name budget (about a second on R2 and GCS): a
		// retry sooner would be refused again, so the writers spread
		// over at least that second.
		window = max(window, RateLimitWindow)
	}
	return n.backoff(attempt, window)
}

// RateLimitWindow is the least backoff window after a write of `current`
// the store refused as rate limited (ErrRateLimited): R2 and GCS accept
// about one write per second to one object name.
const RateLimitWindow = time.Second

// moved reports whether `current` is no longer the observed state, by one
// HEAD: a retry that would lose anyway then skips its pack upload and its
// conditional write (on SeaweedFS a conditional write that meets another
// one waits a second for the key's lock). Only retries ask — an
// uncontended commit stays at three requests — and any doubt (an error)
// answers "not moved": the conditional write is the authority.
func (n *Notebook) moved(ctx context.Context, observed State) bool {
	info, err := n.store.Head(ctx, CurrentKey)
	if err != nil {
		return false
	}
	return info.ETag != observed.ETag
}

// attempt uploads the proposal's pack and conditionally replaces `current`
// with the manifest that accepts it: two requests after the read of
// `current`. When the publication folds the tail, the segments travel in
// its pack if the builder put them there (Manifest.Carried); otherwise
// they are uploaded on their own first (format 2's way, one more request).
func (n *Notebook) attempt(ctx context.Context, observed State, pub string, prop Proposal) (State, error) {
	pack, err := openProposal(prop, observed.Head(), pub)
	if err != nil {
		return State{}, err
	}
	gen, err := NextGeneration(observed.Generation())
	if err != nil {
		return State{}, err
	}
	ref := PackRef{Key: IncrementKey(gen, pub), Sum: cas.Sum(prop.Pack), Size: int64(len(prop.Pack))}
	at := uint64(n.opts.Now().UnixMilli())
	next, err := observed.Manifest.extendAt(pub, prop.Head, ref, at, true)
	switch {
	case err == nil && len(prop.Pack) <= MaxCarrierPack && next.carriedIn(pack):
		next.uploads = nil // they travel in the pack
	case err == nil:
		next, err = observed.Manifest.ExtendAt(pub, prop.Head, ref, at)
	}
	if err != nil {
		// The observed manifest was valid, so the proposal broke a rule:
		// not an integrity problem of the store.
		return State{}, fmt.Errorf("%w: %v", ErrInvalidProposal, err)
	}
	data := encodeManifest(next) // Extend validated it
	// The pack first: until `current` names it, it is only a proposal.
	if err := n.store.Put(ctx, ref.Key, prop.Pack); err != nil {
		return State{}, fmt.Errorf("remote: upload pack: %w", notAmbiguous(err))
	}
	if err := n.putSegments(ctx, next); err != nil {
		return State{}, err
	}
	if prop.Ready != nil {
		if err := prop.Ready(); err != nil {
			return State{}, err
		}
	}
	var etag string
	if observed.ETag == "" {
		etag, err = n.store.CreateIfAbsent(ctx, CurrentKey, data)
	} else {
		etag, err = n.store.ReplaceIfMatch(ctx, CurrentKey, data, observed.ETag)
	}
	switch {
	case err == nil:
		return State{Manifest: next, ETag: etag}, nil
	case errors.Is(err, ErrPrecondition), errors.Is(err, ErrRateLimited):
		// Another write came first, or came within the store's per-name
		// rate limit: ours was not applied either way.
		return State{}, fmt.Errorf("%w: lost the race for generation %d: %w", errNotAccepted, gen, err)
	case errors.Is(err, ErrUnavailable), errors.Is(err, ErrAccessDenied), errors.Is(err, ErrInvalidKey):
		// The store refused or never received the request.
		return State{}, fmt.Errorf("remote: replace current: %w", err)
	default:
		// ErrAmbiguous, a cancelled context, or an error nobody mapped:
		// the replace may have been applied.
		return n.resolve(ctx, next, pub, err)
	}
}

// MaxCarrierPack is the largest pack that carries segments: reading a
// carried segment downloads its carrier, so a large publication (a big
// file added) uploads the segments its fold creates on their own instead
// (one more request, on a commit that is slow anyway).
const MaxCarrierPack = 1 << 20

// ErrInvalidProposal is returned by Publish for a proposal it will not
// upload: a bug in the caller, never a store condition.
var ErrInvalidProposal = errors.New("remote: invalid proposal")

// openProposal re-parses the pack before it is uploaded (trailer, index)
// and proves that it holds the head commit, built on the observed head by
// this publication: the increment's parent and publication ID must describe
// the commit graph truthfully, since verify and readers rely on them. It
// returns the opened pack.
func openProposal(prop Proposal, observed cas.ID, pub string) (*cas.Pack, error) {
	if len(prop.Pack) == 0 || prop.Head.IsZero() {
		return nil, fmt.Errorf("%w: it needs a pack and a head (or Skip)", ErrInvalidProposal)
	}
	pack, err := cas.OpenPack(prop.Pack)
	if err != nil {
		return nil, fmt.Errorf("%w: the pack does not open: %w", ErrInvalidProposal, err)
	}
	obj, err := pack.Get(prop.Head)
	if err != nil {
		return nil, fmt.Errorf("%w: the pack lacks the head commit: %w", ErrInvalidProposal, err)
	}
	c, err := cas.DecodeCommit(obj)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: the head is not a commit: %w", ErrInvalidProposal, err)
	case c.Parent != observed:
		return nil, fmt.Errorf("%w: the head commit's parent is not the observed head", ErrInvalidProposal)
	case c.Publication != pub:
		return nil, fmt.Errorf("%w: the head commit carries publication %q, not %q", ErrInvalidProposal, c.Publication, pub)
	}
	return pack, nil
}

// resolve decides an ambiguous replace by re-reading `current`. Our write
// was conditional on generation g-1 (g = next.Generation), so it can only
// ever have produced generation g: if an increment of generation g is
// recorded, it is ours or someone else's; if `current` is still below g,
// ours has not landed yet. A retry is safe then: it is built under a new
// publication ID on a state that is still g-1's, and the store lets at
// most one write conditional on g-1's ETag win, so the late arrival of
// ours and the retry cannot both be accepted.
func (n *Notebook) resolve(ctx context.Context, next *Manifest, pub string, cause error) (State, error) {
	g := next.Generation
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), resolveTimeout)
	defer cancel()
	var cur State
	var err error
	for try := 1; try <= 3; try++ {
		if cur, err = n.ReadCurrent(rctx); err == nil || errors.Is(err, ErrIntegrity) {
			break
		}
		if try < 3 {
			_ = n.opts.Sleep(rctx, n.backoff(try, 0))
		}
	}
	if err != nil {
		return State{}, fmt.Errorf("remote: publication %s: %w: the replace failed (%w) and re-reading current failed: %v", pub, ErrAmbiguous, cause, err)
	}
	if cur.Generation() < g {
		// The cause is kept as text only: it says "ambiguous", but the
		// outcome is now known.
		return State{}, fmt.Errorf("%w: the replace did not land (%v)", errNotAccepted, cause)
	}
	// Generation g is ours or another publication's; in version 2 it may
	// have left the tail for a segment.
	inc, ok, err := n.publicationAt(rctx, cur, g)
	switch {
	case err != nil:
		return State{}, fmt.Errorf("remote: publication %s: %w: the replace failed (%w) and reading the history failed: %v", pub, ErrAmbiguous, cause, err)
	case ok && inc.Publication == pub && cur.Generation() == g:
		return cur, nil
	case ok && inc.Publication == pub:
		return State{Manifest: next}, nil // accepted, and others already built on it
	case ok:
		return State{}, fmt.Errorf("%w: another publication took generation %d (%v)", errNotAccepted, g, cause)
	}
	return State{}, fmt.Errorf("remote: publication %s: %w: generation %d is no longer recorded in current (%w)", pub, ErrAmbiguous, g, cause)
}

// putSegments uploads the segments a fold created. They are immutable and
// named by content, so a retry that folds the same increments puts the
// same bytes under the same key. A failure is never ambiguous: `current`
// was not touched.
func (n *Notebook) putSegments(ctx context.Context, m *Manifest) error {
	for _, s := range m.uploads {
		if err := n.store.Put(ctx, s.ref.Key(), s.data); err != nil {
			return fmt.Errorf("remote: upload segment: %w", notAmbiguous(err))
		}
	}
	return nil
}

// notAmbiguous turns the ambiguity of an unconditional upload into
// unavailability: whatever happened to the object, `current` was not
// replaced, so nothing can have been accepted (a 500 to a pack upload is
// STORE_UNREACHABLE, never ACCEPTANCE_UNKNOWN).
func notAmbiguous(err error) error {
	if errors.Is(err, ErrAmbiguous) && !errors.Is(err, ErrUnavailable) {
		return fmt.Errorf("%w: nothing was published: %v", ErrUnavailable, err)
	}
	return err
}
