package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
)

// Offers: the writers of one machine waiting for a turn (turns.go) offer
// their proposals to the holder, which includes every offer that merges
// cleanly in its own conditional write, so one turn accepts many commits
// (docs/storage.md §4A). Local turns alone serialise the writers of a
// machine, one commit per conditional write; with offers a turn accepts
// the writers queued behind it as well.
//
//	waiting writer (Turnstile.Take's waiting, each time the kept state moves):
//	    kept state names our publication -> accepted, the wait ends
//	    else build on the kept state G -> Offers.Offer(G, pub, descriptor+pack)
//	holder (its turn, after its own build on G):
//	    Offers.Offered(G) -> decode, check -> include (the caller re-parents
//	    each that merges cleanly; our pack uploads meanwhile) -> CreateIfAbsent
//	    each member pack, Put the segments (together) -> conditional write
//	    naming ours at G+1, the members after it -> keep the group's union
//	    pack and the state nearby (the members learn of it)
//
// Nothing is registered in the store: an offer costs no request, and a
// queued writer whose offer was included makes none at all. The rules of
// group commit (proposal.go) hold: one publication ID per call, across
// its offers and attempts, and one pack under each of its keys (an
// attempt on a state the call built on already publishes that build
// again: the earlier write may still land); an offer on G is built on
// G's head and only a write conditional on G's ETag can include it, so
// once `current` is past G it is dead; a writer offers on a new
// generation, and attempts on one after its offer's, only once a state
// past the offer's generation shows whether it was accepted (the kept
// state's tail, or the store's history); a call that stops while its
// offer may still be included settles like a registered proposal. The
// acceptance a waiting writer reads in the kept state is the holder's: it
// keeps a state only once the store acknowledged its conditional write.
type Offers interface {
	// Offer makes data (EncodeOffer) the offer of publication on
	// parentGeneration, replacing any earlier one of it there.
	Offer(parentGeneration uint64, publication string, data []byte) error
	// Offered returns the offers on parentGeneration, oldest first, and
	// how many writers wait with offers to make (Waiting). It may drop
	// offers on older generations: they are dead.
	Offered(parentGeneration uint64) (offers [][]byte, waiting int)
	// Withdraw removes an offer.
	Withdraw(parentGeneration uint64, publication string)
	// Waiting says whether publication's writer waits for a turn and
	// offers on each new state, so that a holder may wait for its offer.
	Waiting(publication string, waiting bool)
}

// EncodeOffer is an offer's bytes: those of a registration in the store
// (EncodeRegistration: the descriptor, then the pack).
func EncodeOffer(d ProposalDescriptor, pack []byte) []byte {
	return EncodeRegistration(d, pack)
}

// DecodeOffer parses an offer on parentGeneration as DecodeRegistration
// does; an offer always holds its pack.
func DecodeOffer(parentGeneration uint64, data []byte) (Candidate, error) {
	line, _, _ := bytes.Cut(data, []byte("\n"))
	var probe struct {
		Publication string `json:"publication"`
	}
	if err := json.Unmarshal(line, &probe); err != nil {
		return Candidate{}, fmt.Errorf("remote: offer: %w", err)
	}
	d, pack, err := DecodeRegistration(ProposalKey(parentGeneration, probe.Publication), data)
	if err != nil {
		return Candidate{}, err
	}
	if pack == nil {
		return Candidate{}, fmt.Errorf("remote: offer of %s: no pack", d.Publication)
	}
	return Candidate{ProposalDescriptor: d, PackData: pack}, nil
}

// offering is one call's offers (publishFrom with Offers).
type offering struct {
	n       *Notebook
	pub     string
	build   func(ctx context.Context, observed State, publication string) (Proposal, error)
	include IncludeFunc

	live      bool     // an offer of ours on gen may still be included
	gen       uint64   // the generation of our last offer
	etag      string   // the state the call's last proposal was built on: an offer's while waiting, then an attempt's
	prop      Proposal // that proposal (never a Skip)
	attempted          // the generations offers and attempts were made on
	stopped   bool     // offer no more while waiting (a build or the history read failed)
	accepted  *Accepted
}

// cleared records that a state past every generation an offer or attempt
// was made on does not name our publication: all of them are decided,
// none accepted, and no later search reads their writes again.
func (o *offering) cleared() {
	o.live = false
	o.decided()
}

// waiting is the Turnstile's waiting function: it reports true once the
// kept state shows our publication accepted, and otherwise offers our
// proposal on the kept state when it moved.
func (o *offering) waiting(ctx context.Context) func() bool {
	return func() bool {
		if o.stopped {
			return false
		}
		st, _ := o.n.nearbyCurrent()
		if st.Manifest == nil || st.ETag == o.etag || o.tried && st.Generation() <= o.gen {
			return false
		}
		if o.tried {
			// Past our offer's generation: it was decided. The writes
			// on our offers' generations tell (the tail, and segments
			// the holder kept nearby; the store only when it did not).
			inc, ok, err := o.n.acceptedSince(ctx, st, o.attempted, o.pub)
			switch {
			case err != nil:
				o.stop() // the turn decides
				return false
			case ok:
				acc := Accepted{State: st, Publication: o.pub, Published: true, Included: inc.Generation, Offered: true}
				if o.n.opts.Observe != nil {
					_ = o.n.opts.Observe(ctx, st)
				}
				o.accepted, o.live = &acc, false
				return true
			}
			o.withdraw()
			o.cleared() // a write on its generation won without it
		}
		o.n.opts.Offers.Waiting(o.pub, true) // a holder may wait for this offer
		prop, err := o.build(ctx, st, o.pub)
		if err == nil && !prop.Skip && prop.Ready != nil {
			err = prop.Ready() // the pending record, before it may be included
		}
		if errors.Is(err, ErrStale) {
			return false // a state behind the writer's own: wait for a later one
		}
		if err != nil || prop.Skip || checkProposal(prop, st.Head(), o.pub) != nil {
			o.stop() // the turn decides
			return false
		}
		ref := PackRef{Key: IncrementKey(st.Generation()+1, o.pub), Sum: cas.Sum(prop.Pack), Size: int64(len(prop.Pack))}
		d := ProposalDescriptor{Publication: o.pub, ParentGeneration: st.Generation(), Parent: st.Head(), Head: prop.Head, Pack: ref}
		o.note(st.Generation())
		o.gen, o.etag, o.prop = st.Generation(), st.ETag, prop
		o.live = true // from the first byte written, it may be read
		if o.n.opts.Offers.Offer(d.ParentGeneration, o.pub, EncodeOffer(d, prop.Pack)) != nil {
			o.stop()
		}
		return false
	}
}

// A holder waits for the offers of the writers waiting behind its turn:
// each builds on the state this turn builds on as soon as it is kept, on
// cores they share. It stops when every waiting writer has offered, when
// no new offer came for formQuiet, or after formMax. Without it each turn
// took the few offers that happened to be written, and every other
// waiting writer built again for the next turn: at 100 writers committing
// at once, some fifty builds per commit.
const (
	formPoll  = 2 * time.Millisecond
	formQuiet = 50 * time.Millisecond
	formMax   = time.Second
)

// DefaultMaxOffers bounds how many offers one turn includes (MaxGroup, if
// smaller, wins): a turn's include and member uploads grow with its group,
// and a turn that publishes nothing for five seconds makes the writers
// behind it give up waiting (server/turns.go). At 100 `serve` writers
// committing at once on 2 cores, groups of 99 took that long and the
// writers raced (223 lost conditional writes).
const DefaultMaxOffers = 32

// limit is how many offers one turn includes.
func (o *offering) limit() int {
	if m := o.n.opts.MaxGroup; m > 0 && m < DefaultMaxOffers {
		return m
	}
	return DefaultMaxOffers
}

// form returns the offers on generation g once the group has formed.
func (o *offering) form(ctx context.Context, g uint64) [][]byte {
	limit := o.limit()
	own := 0 // our own offer on g is read too, and is no member
	if o.tried && o.gen == g {
		own = 1
	}
	offered, waiting := o.n.opts.Offers.Offered(g)
	start := o.n.opts.Now()
	grew := start
	for len(offered)-own < min(waiting, limit) {
		now := o.n.opts.Now()
		if now.Sub(grew) >= formQuiet || now.Sub(start) >= formMax || o.n.opts.Sleep(ctx, formPoll) != nil {
			break
		}
		more, w := o.n.opts.Offers.Offered(g)
		if len(more) > len(offered) {
			grew = o.n.opts.Now()
		}
		offered, waiting = more, w
	}
	return offered
}

// stop ends the offering while waiting: the holders no longer wait for
// an offer of ours.
func (o *offering) stop() {
	o.stopped = true
	o.n.opts.Offers.Waiting(o.pub, false)
}

// withdraw removes our offer file; whether it may still be included is
// live's business (a holder may have read it already).
func (o *offering) withdraw() {
	if o.tried {
		o.n.opts.Offers.Withdraw(o.gen, o.pub)
	}
}

// acceptedSince decides, before an attempt of ours on state, whether an
// offer or attempt of ours was accepted; an offer on a generation state
// is past is dead from here on.
func (o *offering) acceptedSince(ctx context.Context, state State) (Accepted, bool, error) {
	if !o.tried {
		return Accepted{}, false, nil
	}
	inc, ok, err := o.n.acceptedSince(ctx, state, o.attempted, o.pub)
	if err != nil || !ok {
		if err == nil && state.Generation() > o.top {
			o.cleared()
		}
		return Accepted{}, false, err
	}
	o.live = false
	return Accepted{State: state, Publication: o.pub, Published: true, Included: inc.Generation, Offered: true}, true, nil
}

// proposal returns what our attempt on state publishes: the call's last
// proposal when it was built on state (its offer's, or its last
// attempt's), else a new build. With one publication ID for the whole
// call, a second build on a state would put a second pack under the key
// an earlier attempt's write (or a holder that included our offer) names,
// and that write, ambiguous and re-read as absent, may still land
// (docs/storage.md §4, "A request that arrives late"). The states a call
// attempts on only move forward, so the last build is the one to keep.
func (o *offering) proposal(ctx context.Context, state State) (Proposal, error) {
	if o.etag != "" && o.etag == state.ETag {
		return o.prop, nil
	}
	prop, err := o.build(ctx, state, o.pub)
	if err == nil && !prop.Skip {
		o.etag, o.prop = state.ETag, prop
	}
	return prop, err
}

// end ends the call with err: while our offer may still be included,
// settle decides (proposal.go).
func (o *offering) end(ctx context.Context, attempts int, err error) (Accepted, error) {
	if o.live {
		acc, err := o.n.settle(ctx, o.gen, o.attempted, o.pub, attempts, err)
		if err == nil {
			acc.Offered = true
		}
		return acc, err
	}
	return Accepted{}, err
}

// gather returns the offers on observed's generation that include
// re-parents onto our own proposal (none on any failure: they are left to
// their writers).
func (o *offering) gather(ctx context.Context, observed State, own Proposal, offered [][]byte) []Member {
	var cands []Candidate
	limit := o.limit()
	for _, data := range offered {
		c, err := DecodeOffer(observed.Generation(), data)
		if err != nil || c.Publication == o.pub || c.Parent != observed.Head() {
			continue
		}
		if observed.Manifest != nil {
			if _, done := observed.Manifest.FindPublication(c.Publication); done {
				continue
			}
		}
		if cands = append(cands, c); len(cands) == limit {
			break
		}
	}
	if len(cands) == 0 {
		return nil
	}
	members, err := o.include(ctx, observed, own, cands)
	if err != nil {
		return nil
	}
	return checkedMembers(o.pub, cands, members)
}

// attempt is the holder's attempt on observed: our proposal with the
// offers on observed's generation that include took, in one conditional
// write (proposal.go's writeGroup, no group pack in the store: the
// members read the one kept nearby); without any offer, the
// single-writer attempt of publish.go. Our pack is uploaded while the
// offers are merged and the members' packs created.
func (o *offering) attempt(ctx context.Context, observed State, prop Proposal, held bool) (State, []Member, error) {
	var offered [][]byte
	if held {
		offered = o.form(ctx, observed.Generation())
	}
	if len(offered) == 0 {
		next, err := o.n.attempt(ctx, observed, o.pub, prop)
		return next, nil, err
	}
	next, ref, at, err := o.n.extendGroup(observed, o.pub, prop)
	if err != nil {
		return State{}, nil, err
	}
	uploaded := make(chan error, 1)
	go func() { uploaded <- o.n.store.Put(ctx, ref.Key, prop.Pack) }()
	members := o.gather(ctx, observed, prop, offered)
	if prop.Ready != nil {
		if err := prop.Ready(); err != nil {
			<-uploaded
			return State{}, nil, err
		}
	}
	st, kept, err := o.n.writeGroup(ctx, observed, o.pub, prop, next, at, members, false, uploaded)
	if err != nil {
		return State{}, nil, err
	}
	if kept > 0 {
		o.n.group.writes.Add(1)
		o.n.group.members.Add(int64(kept))
	}
	return st, members[:kept], nil
}
