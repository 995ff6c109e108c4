package remote

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
)

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
// Errors from build are returned unchanged. A store error during upload or
// an unambiguous store error on the replace (unreachable, access denied)
// is returned wrapped: nothing was accepted, at most an unreferenced pack
// is left behind. An error matching ErrAmbiguous may also match the
// sentinel of its cause, so callers test ErrAmbiguous first.
func (n *Notebook) Publish(ctx context.Context, build func(ctx context.Context, observed State, publication string) (Proposal, error)) (Accepted, error) {
	return n.PublishFrom(ctx, State{}, build, nil)
}

// PublishFrom is Publish starting from known, a state the caller holds (a
// long-lived writer's own last publication), instead of a read of
// `current`: the conditional replace proves known still the latest, so an
// uncontended commit makes two requests instead of three. When it is not
// (the replace fails its condition, or is proved not applied), when the
// build finds nothing to publish on it (a state that may be outdated
// cannot say that), or when it names a pack gone from the store, the call
// goes on from a fresh read: the guessed attempt counts as neither a retry
// nor a reason to back off. A zero known is Publish.
//
// With Options.GroupCommit and include, a race lost to another writer
// (after a read of `current`, not a wrong guess) goes on as PublishGroup's
// retries do, registering under the same publication ID (continueGroup),
// and a read that finds another machine's writers busy registers at once
// (readInTurn).
func (n *Notebook) PublishFrom(ctx context.Context, known State, build func(ctx context.Context, observed State, publication string) (Proposal, error), include IncludeFunc) (Accepted, error) {
	return n.publishFrom(ctx, known, false, build, include, nil)
}

// PublishNearby is Publish that, once its turn comes (turns.go), builds on
// the state the writer before it in the turnstile published
// (Nearby.Current) instead of reading `current`, as PublishFrom builds on
// a known state: the conditional write proves it, a wrong guess goes on
// from a read. Without a Nearby state it is Publish. The caller uses it
// only where a state guessed may stand for a state read (server/solo.go
// says where not).
//
// With Options.Offers and include, it keeps one publication ID for the
// whole call; while it waits for its turn it offers its proposal to the
// holder, and its own turn includes the offers of the writers waiting
// behind it (offers.go). Accepted.Offered then reports a publication
// accepted as an offer, Accepted.Members the offers our write accepted.
// With Options.GroupCommit, races with writers of other machines go to
// group commit as PublishFrom's do, out of the turn.
func (n *Notebook) PublishNearby(ctx context.Context, build func(ctx context.Context, observed State, publication string) (Proposal, error), include IncludeFunc) (Accepted, error) {
	var o *offering
	if n.opts.Offers != nil && n.opts.Turns != nil && n.opts.Nearby != nil && include != nil {
		o = &offering{n: n, pub: NewUUIDv7(), build: build, include: include}
		defer o.withdraw() // its mark is gone once its Take returned (publishFrom)
	}
	return n.publishFrom(ctx, State{}, true, build, include, o)
}

func (n *Notebook) publishFrom(ctx context.Context, known State, nearby bool, build func(ctx context.Context, observed State, publication string) (Proposal, error), include IncludeFunc, o *offering) (Accepted, error) {
	// A turn (turns.go) is held from the read of `current` to the outcome
	// of the conditional write, and given up while backing off.
	var waiting func() bool
	if o != nil {
		waiting = o.waiting(ctx)
	}
	release, held := n.takeTurn(ctx, waiting)
	defer func() { release() }()
	if o != nil {
		o.n.opts.Offers.Waiting(o.pub, false) // its turn, or accepted
		if o.accepted != nil {
			o.accepted.Attempts = 1
			return *o.accepted, nil
		}
	}
	// stop ends the call with err (settling an offer that may still be
	// included).
	stop := func(attempt int, err error) (Accepted, error) {
		if o != nil {
			return o.end(ctx, attempt, err)
		}
		return Accepted{}, err
	}
	var handoff State // the state the previous holder of the turn published
	if nearby && known.Manifest == nil {
		var reliable bool
		if handoff, reliable = n.nearbyCurrent(); reliable {
			known = handoff
		}
	}
	group := n.opts.GroupCommit && include != nil
	state, guessed := known, known.Manifest != nil && known.ETag != ""
	if !guessed {
		var joined *groupCall
		var err error
		if state, joined, err = n.readInTurn(ctx, group, o); err != nil {
			return stop(0, err)
		}
		if joined != nil {
			release()
			return n.groupAttempts(ctx, joined, state, 1, build, include)
		}
	}
	read := n.opts.Now()
	for attempt := 1; ; attempt++ {
		pub := NewUUIDv7()
		var prop Proposal
		var err error
		switch {
		case o == nil:
			prop, err = build(ctx, state, pub)
		default:
			pub = o.pub
			acc, ok, aerr := o.acceptedSince(ctx, state)
			if aerr != nil {
				return stop(attempt, aerr)
			}
			if ok {
				acc.Attempts = attempt
				return acc, nil
			}
			prop, err = o.proposal(ctx, state)
		}
		if guessed && (errors.Is(err, ErrStale) || err == nil && prop.Skip) {
			err = errGuessedWrong
		} else if errors.Is(err, ErrStale) && attempt <= n.opts.Retries && n.moved(ctx, state) {
			// A pack the observed manifest named is gone because `current`
			// moved on (a cleanup after a checkpoint): like a lost race.
			err = fmt.Errorf("%w: %w", errNotAccepted, err)
		} else if err != nil {
			return stop(attempt, err)
		}
		if errors.Is(err, errNotAccepted) && !guessed {
			if err := n.backOff(ctx, attempt, read, err, &release, &held); err != nil {
				return stop(attempt, err)
			}
			if state, err = n.ReadCurrent(ctx); err != nil {
				return stop(attempt, err)
			}
			read = n.opts.Now()
			continue
		}
		if err == nil && prop.Skip {
			if o != nil && o.live {
				// Nothing to publish on a state our offer's generation
				// is not past: only an offer accepted since could
				// have made it so, which the next read shows.
				return stop(attempt, fmt.Errorf("%w: nothing left to publish on generation %d", ErrAmbiguous, state.Generation()))
			}
			return Accepted{State: state, Attempts: attempt}, nil
		}
		var next State
		var members []Member
		switch {
		case err != nil: // the guess was wrong before any request
		case attempt > 1 && n.moved(ctx, state):
			err = fmt.Errorf("%w: current moved past generation %d while the retry was built: %w", errNotAccepted, state.Generation(), ErrPrecondition)
		case o != nil:
			// Only the holder of the turn includes offers: a writer that
			// went ahead without it (the turns stalled) would race the
			// holder for the same members.
			o.note(state.Generation())
			next, members, err = o.attempt(ctx, state, prop, held)
		default:
			next, err = n.attempt(ctx, state, pub, prop)
		}
		if early := (*acceptedEarlier)(nil); errors.As(err, &early) {
			return n.acceptEarlier(ctx, early, attempt), nil
		}
		if err == nil {
			if n.opts.Observe != nil {
				_ = n.opts.Observe(ctx, State{Manifest: next.Manifest}) // only records it: it is newer than anything read
			}
			// Before the turn ends; the next holder may guess when this
			// one found `current` as the previous holder had left it.
			n.keepNearby(next, pub, prop.Pack, handoff.ETag != "" && state.ETag == handoff.ETag, members...)
			return Accepted{State: next, Publication: pub, Attempts: attempt, Published: true, Members: len(members)}, nil
		}
		if !errors.Is(err, errNotAccepted) {
			return stop(attempt, err)
		}
		if guessed {
			// Read what `current` is and start over: not a retry.
			var joined *groupCall
			if state, joined, err = n.readInTurn(ctx, group, o); err != nil {
				return stop(attempt, err)
			}
			if joined != nil {
				release()
				return n.groupAttempts(ctx, joined, state, 1, build, include)
			}
			guessed, read = false, n.opts.Now()
			attempt--
			continue
		}
		if group {
			// The turn kept this machine's writers from racing one
			// another; this race was lost to another machine's, which
			// group commit resolves through the store.
			release()
			return n.continueGroup(ctx, state, pub, prop, o, attempt, build, include)
		}
		if attempt > n.opts.Retries {
			return stop(attempt, fmt.Errorf("%w: %d attempts: %w", ErrLostRace, attempt, err))
		}
		if err := n.backOff(ctx, attempt, read, err, &release, &held); err != nil {
			return stop(attempt, err)
		}
		if state, err = n.ReadCurrent(ctx); err != nil {
			return stop(attempt, err)
		}
		read = n.opts.Now()
	}
}

// backOff gives up the turn *release ends, sleeps the backoff of an
// attempt whose window began at read and that lost with the error lost,
// and takes a new turn into *release.
func (n *Notebook) backOff(ctx context.Context, attempt int, read time.Time, lost error, release *func(), held *bool) error {
	window := n.opts.Now().Sub(read)
	if errors.Is(lost, ErrRateLimited) {
		// The store refused the write because `current` was written
		// within its per-name budget (about a second on R2 and GCS): a
		// retry sooner would be refused again, so the writers spread
		// over at least that second.
		window = max(window, RateLimitWindow)
	}
	wait := n.backoff(attempt, window)
	(*release)()
	*release = func() {}
	if err := n.opts.Sleep(ctx, wait); err != nil {
		return err
	}
	*release, *held = n.takeTurn(ctx, nil)
	return nil
}

// RateLimitWindow is the least backoff window after a write of `current`
// the store refused as rate limited (ErrRateLimited): R2 and GCS accept
// about one write per second to one object name.
const RateLimitWindow = time.Second

// errGuessedWrong marks a PublishFrom attempt on a known state that cannot
// go on (its build skipped, or named a pack gone): it is made again on a
// read state.
var errGuessedWrong = fmt.Errorf("%w: the known state may be outdated", errNotAccepted)

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
	// `current` is staged while the pack is uploaded (stage.go).
	staged := stageAhead(n.store, data)
	defer discardStaged(staged)
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
	etag, err := writeCurrent(ctx, n.store, staged, data, observed.ETag)
	switch {
	case err == nil:
		return State{Manifest: next, ETag: etag, encoded: data}, nil
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
		return n.resolveAt(ctx, next, next.Generation, pub, err)
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

// checkProposal re-parses the pack before it is uploaded (trailer, index)
// and proves that it holds the head commit, built on the observed head by
// this publication: the increment's parent and publication ID must describe
// the commit graph truthfully, since verify and readers rely on them.
func checkProposal(prop Proposal, observed cas.ID, pub string) error {
	_, err := openProposal(prop, observed, pub)
	return err
}

// openProposal is checkProposal, returning the opened pack.
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

// resolveAt decides an ambiguous replace by re-reading `current`. Our write
// was conditional on generation g-1, so it can only ever have produced
// generation g: if an increment of generation g is recorded, it is ours or
// someone else's; if `current` is still below g, ours has not landed yet.
// A retry is safe (the store lets at most one write conditional on g-1
// win) as long as it names under our publication ID nothing but what this
// write named: the request may still arrive (a server frozen past the
// client's timeout answers it later), so a retry on the same state
// publishes the same proposal (offering.proposal, groupAttempts).
//
// Our publication at g may also have been named by an earlier attempt of
// the same call, conditional on the same state, that arrived late: then
// the generations after it are that write's members, not next's, and the
// call is accepted as if a helper had included it (*acceptedEarlier).
//
// g is the generation of our own increment: next.Generation, or (group
// commit) the first generation of a group whose members follow it.
func (n *Notebook) resolveAt(ctx context.Context, next *Manifest, g uint64, pub string, cause error) (State, error) {
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
	mine, asNext := ok && inc.Publication == pub, false
	if err == nil && mine {
		asNext, err = n.wroteAsNext(rctx, cur, next, g)
	}
	switch {
	case err != nil:
		return State{}, fmt.Errorf("remote: publication %s: %w: the replace failed (%w) and reading the history failed: %v", pub, ErrAmbiguous, cause, err)
	case mine && !asNext:
		return State{}, &acceptedEarlier{state: cur, inc: inc}
	case mine && cur.Generation() == next.Generation:
		return cur, nil
	case mine:
		return State{Manifest: next}, nil // accepted, and others already built on it
	case ok:
		return State{}, fmt.Errorf("%w: another publication took generation %d (%v)", errNotAccepted, g, cause)
	}
	return State{}, fmt.Errorf("remote: publication %s: %w: generation %d is no longer recorded in current (%w)", pub, ErrAmbiguous, g, cause)
}

// wroteAsNext reports whether cur names generations g..next.Generation as
// next does (publication, head and time: a write gives all it names one
// time, §4B): the write that landed is the one that made next.
func (n *Notebook) wroteAsNext(ctx context.Context, cur State, next *Manifest, g uint64) (bool, error) {
	if cur.Generation() < next.Generation {
		return false, nil
	}
	got, err := n.Publications(ctx, cur, g, next.Generation)
	if err != nil {
		return false, err
	}
	want, err := n.Publications(ctx, State{Manifest: next}, g, next.Generation)
	if err != nil {
		return false, err
	}
	return slices.EqualFunc(got, want, func(a, b Increment) bool {
		return a.Generation == b.Generation && a.Publication == b.Publication && a.Head == b.Head && a.Time == b.Time
	}), nil
}

// acceptedEarlier is resolveAt's finding that an earlier write of the
// call's publication landed: state is `current` as read, inc our
// increment in it.
type acceptedEarlier struct {
	state State
	inc   Increment
}

// acceptEarlier is the call's outcome when resolveAt found it accepted by
// an earlier write: as a member of another writer's group is (Included),
// since what that write named after ours is not what the last attempt
// built.
func (n *Notebook) acceptEarlier(ctx context.Context, early *acceptedEarlier, attempts int) Accepted {
	if n.opts.Observe != nil {
		_ = n.opts.Observe(ctx, early.state)
	}
	return Accepted{State: early.state, Publication: early.inc.Publication, Attempts: attempts, Published: true, Included: early.inc.Generation}
}

func (e *acceptedEarlier) Error() string {
	return fmt.Sprintf("remote: publication %s was accepted at generation %d by an earlier write of it", e.inc.Publication, e.inc.Generation)
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
