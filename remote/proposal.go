package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
)

// Group commit (DESIGN §5, docs/storage.md §4B). Off unless
// Options.GroupCommit is set; then PublishGroup runs instead of the
// single-writer loop of publish.go:
//
//	attempt 1       build -> Put pack -> conditional write (3 requests, as before)
//	lost race       the backoff of publish.go
//	attempt k > 1   check whether an earlier attempt was accepted (by us or
//	                as a member of someone's group) -> build -> Put the
//	                registration proposals/<G>-<pub> (descriptor, pack) ->
//	                CreateIfAbsent proposals/<G>-lead:
//	                  lost: follow (no write): GET current, first after
//	                        FirstWait + 5 round trips, until it moves;
//	                        look for our ID;
//	                  won (or `current` did not move since our last
//	                        attempt, so the leader may be gone): Put pack
//	                        meanwhile; wait FirstWait + 2 round trips ->
//	                        List proposals/<G>- -> Get each other
//	                        registration (oldest first, at most MaxGroup) ->
//	                        include (the caller re-parents those that merge
//	                        cleanly) -> CreateIfAbsent each member pack ->
//	                        Put the group pack proposals/<G>-<pub>-group ->
//	                        conditional write of `current` naming our
//	                        increment at G+1 and the members at G+2, ...
//
// A member learns its acceptance from `current`, then reads the group pack
// (FetchGroupPack) instead of one increment per member.
//
// Invariants (tested by the model test in server/groupcommit_model_test.go):
//   - one publication ID per Publish call, across every attempt;
//   - a descriptor registered on generation G names a pack built on G's
//     head, and only a write conditional on G's ETag includes it: once
//     `current` is past G it is dead, so each registration is decided by
//     one write;
//   - before every attempt the proposer reads `current` and looks for its
//     ID in every generation a write conditional on one it attempted on
//     can have named (acceptedSince: the run of generations after each
//     that share one time): found means accepted (whoever wrote it), and
//     it stops; not found while `current` is past those attempts means
//     none of them can ever be accepted, so the next one cannot
//     double-accept;
//   - a writer includes at most one descriptor per publication ID and never
//     its own; member packs are created with CreateIfAbsent, so two helpers
//     racing for one member key cannot overwrite each other's bytes (the
//     one whose create fails leaves that member, and the ones after it,
//     out).

// groupStats counts, per Notebook, the won writes made by an attempt
// that registered (the ones that list proposals) and the members they
// included.
type groupStats struct {
	writes, members atomic.Int64
	rtt             atomic.Int64 // the last lead marker create's round trip (ns)
	mu              sync.Mutex
	memory          ContentionRecord // the in-process ContentionMemory
}

// ContentionMemory remembers whether this writer's publications meet
// contention, so that in contention even a first attempt registers and
// joins (or leads) the group of its generation instead of racing it: in
// continuous contention a fresh first attempt (three requests, never
// registered) otherwise beats the group's leader, whose write then loses
// and the group dissolves. A commit counts as contended when, within
// ContentionWindow, this writer met contention (a lost race, a lead
// marker already taken, a group that included it or that it led) or
// another writer published since this writer's last publication (the
// `current` it reads anyway is past the generation it saw then). Nothing
// is read from the store for it: an uncontended commit, or a lone writer
// committing in a row, stays at three requests. The default lives in the
// Notebook (a long-lived process); the engine passes one kept in P so
// that consecutive CLI processes share it (server/groupcommit_memory.go).
type ContentionMemory interface {
	Load() ContentionRecord
	Save(ContentionRecord)
}

// ContentionRecord is what a ContentionMemory keeps.
type ContentionRecord struct {
	Contended  time.Time // when contention was last met (zero: never)
	Published  time.Time // when this writer's last publication ended
	Generation uint64    // the generation of `current` it knew then
}

// ContentionWindow is how long a writer stays in the registering mode:
// longer than the gap between one agent's consecutive commits, short
// enough that a writer left alone soon goes back to three requests (a
// registering commit that finds nobody pays a registration PUT, a marker
// HEAD and CREATE, a LIST and FirstWait plus two round trips).
const ContentionWindow = 2 * time.Second

// contended reports whether a commit that read generation g (its first
// read of `current`) should register from its first attempt.
func (r ContentionRecord) contended(now time.Time, g uint64) bool {
	recent := func(t time.Time) bool {
		return !t.IsZero() && now.Sub(t) < ContentionWindow && now.Sub(t) > -ContentionWindow
	}
	return recent(r.Contended) || (recent(r.Published) && g > r.Generation)
}

// A fleet whose agents commit seldom each (1,000 agents x 1 commit a
// minute) never meets contention within ContentionWindow of its own last
// commit, yet publishes many times a second: every first attempt raced
// as three requests, beat the group's leader, and groups stayed at 1.2
// commits per write. `current`'s tail tells what the memory cannot: the
// times of the newest publications. A first attempt registers when they
// show publications so frequent that one lands, on average, within
// busyShare of an attempt's window (busyWindow round trips, from reading
// `current` to the conditional write: catch-up, pack upload, write).
const (
	busyWindow  = 4   // round trips
	busyShare   = 0.3 // expected other publications per attempt window
	busyHorizon = ContentionWindow
	busyMinRTT  = time.Millisecond
	busyMaxRTT  = 250 * time.Millisecond
)

// tailBusy reports whether the tail of m, read at now with a round trip
// of rtt, shows publications at least busyShare per attempt window. The
// rate is counted over the newest increments published within
// busyHorizon of now (members of a group each count: it is the commit
// rate), over the time since the oldest of them; clock skew between
// writers only moves that estimate by the skew over the horizon.
func tailBusy(m *Manifest, now time.Time, rtt time.Duration) bool {
	if m == nil {
		return false
	}
	nowMs := now.UnixMilli()
	n, oldest := 0, nowMs
	for i := len(m.Increments) - 1; i >= 0; i-- {
		t := int64(m.Increments[i].Time)
		if t == 0 || nowMs-t > busyHorizon.Milliseconds() {
			break
		}
		n, oldest = n+1, min(oldest, t)
	}
	if n < 2 {
		return false // one publication is no rate
	}
	span := time.Duration(max(nowMs-oldest, 1)) * time.Millisecond
	window := busyWindow * min(max(rtt, busyMinRTT), busyMaxRTT)
	return float64(n)*float64(window) >= busyShare*float64(span)
}

// notebookMemory is the in-process ContentionMemory.
type notebookMemory struct{ n *Notebook }

func (m notebookMemory) Load() ContentionRecord {
	m.n.group.mu.Lock()
	defer m.n.group.mu.Unlock()
	return m.n.group.memory
}

func (m notebookMemory) Save(r ContentionRecord) {
	m.n.group.mu.Lock()
	defer m.n.group.mu.Unlock()
	m.n.group.memory = r
}

func (n *Notebook) contention() ContentionMemory {
	if n.opts.Contention != nil {
		return n.opts.Contention
	}
	return notebookMemory{n}
}

// GroupStats returns how many won conditional writes of this notebook
// were group-commit retries and how many registered proposals they
// included (for tests and the fleet simulation).
func (n *Notebook) GroupStats() (writes, members int64) {
	return n.group.writes.Load(), n.group.members.Load()
}

// ProposalsPrefix holds the registered proposals.
const ProposalsPrefix = "proposals/"

// DefaultMaxGroup bounds how many registered proposals one write includes.
const DefaultMaxGroup = 128

// ProposalDescriptor describes what a writer that lost a race registers
// under ProposalKey(ParentGeneration, Publication) (EncodeRegistration:
// the descriptor, then the pack): the head it built on and its pack, whose
// key is IncrementKey(ParentGeneration+1, Publication) if it writes itself.
type ProposalDescriptor struct {
	Publication      string
	ParentGeneration uint64
	Parent           cas.ID // the head of generation ParentGeneration (zero for the empty notebook)
	Head             cas.ID // the proposal's head commit, in Pack
	Pack             PackRef
}

// ProposalKey is proposals/<parentGeneration, 20 digits>-<uuidv7>.
func ProposalKey(parentGeneration uint64, publication string) string {
	return strings.TrimSuffix(packKey(ProposalsPrefix, parentGeneration, publication), packSuffix)
}

// GroupPackKey is where the writer whose publication pub leads the group
// on parentGeneration puts the group pack: every object of its own
// increment's pack and of its members', in one pack (proposals/<G>-<pub>-group).
// A member accepted by that write reads this one object instead of an
// increment per generation of the group. It is written before the
// conditional write, so it exists for every accepted group (unless its
// upload failed: then the increments serve); after a lost write it is
// garbage, removed by CleanProposals with the descriptors.
func GroupPackKey(parentGeneration uint64, pub string) string {
	return ProposalKey(parentGeneration, pub) + groupPackSuffix
}

const groupPackSuffix = "-group"

// errFollow marks an attempt that registered and left the write to the
// generation's leader.
var errFollow = errors.New("remote: following the group's leader")

// A follower reads `current` (one GET each) until it moves, the first
// FirstWait plus five of its round trips after it lost the lead, later
// ones at growing intervals up to followMaxPoll, for at most followWait: a
// leader of a large group on busy cores takes well over a second, and a
// follower that gives up early races it (and usually loses).
const (
	followWait    = 5 * time.Second
	followMaxPoll = 250 * time.Millisecond
)

// maxFollowRTT: a lead marker request slower than this (a create that
// waited for a store's lock) does not scale the follow waits.
const maxFollowRTT = 50 * time.Millisecond

// followPolls bounds settle's reads of `current`.
const followPolls = 40

// leadKey is the marker whose creator leads the group of a generation.
func leadKey(parentGeneration uint64) string {
	return proposalPrefix(parentGeneration) + "lead"
}

func parseLeadKey(key string) (uint64, error) {
	rest, ok := strings.CutPrefix(key, ProposalsPrefix)
	if !ok || len(rest) != 25 || rest[20:] != "-lead" {
		return 0, fmt.Errorf("remote: %q is not a lead key", key)
	}
	return strconv.ParseUint(rest[:20], 10, 64)
}

// proposalPrefix lists the descriptors registered on one generation.
func proposalPrefix(parentGeneration uint64) string {
	k := ProposalKey(parentGeneration, "")
	return k
}

// parseProposalKey returns the parent generation and publication a
// descriptor key names.
func parseProposalKey(key string) (uint64, string, error) {
	rest, ok := strings.CutPrefix(key, ProposalsPrefix)
	if !ok || len(rest) < 22 || rest[20] != '-' {
		return 0, "", fmt.Errorf("remote: %q is not a proposal key", key)
	}
	g, err := strconv.ParseUint(rest[:20], 10, 64)
	if err != nil {
		return 0, "", fmt.Errorf("remote: %q is not a proposal key", key)
	}
	pub := rest[21:]
	if !IsPublicationID(pub) {
		return 0, "", fmt.Errorf("remote: %q is not a proposal key", key)
	}
	return g, pub, nil
}

// descriptorJSON fixes the encoding: fields in this order, IDs in lower
// hex, no whitespace, a trailing newline.
type descriptorJSON struct {
	Version          int    `json:"version"`
	Publication      string `json:"publication"`
	ParentGeneration uint64 `json:"parentGeneration"`
	Parent           string `json:"parent"`
	Head             string `json:"head"`
	PackSum          string `json:"packSum"`
	PackSize         int64  `json:"packSize"`
}

const descriptorVersion = 1

// EncodeProposal returns the descriptor's bytes.
func EncodeProposal(d ProposalDescriptor) []byte {
	parent := ""
	if !d.Parent.IsZero() {
		parent = d.Parent.String()
	}
	data, _ := json.Marshal(descriptorJSON{
		Version: descriptorVersion, Publication: d.Publication, ParentGeneration: d.ParentGeneration,
		Parent: parent, Head: d.Head.String(), PackSum: d.Pack.Sum.String(), PackSize: d.Pack.Size,
	})
	return append(data, '\n')
}

// EncodeRegistration is what a writer registers: the descriptor
// (EncodeProposal: one line) followed by its pack. (A writer before it
// registered the descriptor alone, its pack already at d.Pack.Key.)
func EncodeRegistration(d ProposalDescriptor, pack []byte) []byte {
	return append(EncodeProposal(d), pack...)
}

// DecodeRegistration parses a registration read at key: the descriptor
// (DecodeProposal) and the pack that follows it, checked against the
// descriptor's size and BLAKE3; the pack is nil for a descriptor alone,
// as older writers registered it.
func DecodeRegistration(key string, data []byte) (ProposalDescriptor, []byte, error) {
	line := data
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		line = data[:i+1]
	}
	d, err := DecodeProposal(key, line)
	if err != nil {
		return ProposalDescriptor{}, nil, err
	}
	pack := data[len(line):]
	if len(pack) == 0 {
		return d, nil, nil
	}
	if int64(len(pack)) != d.Pack.Size || cas.Sum(pack) != d.Pack.Sum {
		return ProposalDescriptor{}, nil, fmt.Errorf("remote: proposal %s: the pack does not match its descriptor", key)
	}
	return d, pack, nil
}

// DecodeProposal parses a descriptor read at key, refusing anything
// EncodeProposal would not have written for that key.
func DecodeProposal(key string, data []byte) (ProposalDescriptor, error) {
	bad := func(why string) (ProposalDescriptor, error) {
		return ProposalDescriptor{}, fmt.Errorf("remote: proposal %s: %s", key, why)
	}
	g, pub, err := parseProposalKey(key)
	if err != nil {
		return bad("bad key")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var j descriptorJSON
	if err := dec.Decode(&j); err != nil {
		return bad("not a descriptor")
	}
	d := ProposalDescriptor{Publication: j.Publication, ParentGeneration: j.ParentGeneration}
	if j.Parent != "" {
		if d.Parent, err = cas.ParseID(j.Parent); err != nil {
			return bad("bad parent")
		}
	}
	if d.Head, err = cas.ParseID(j.Head); err != nil {
		return bad("bad head")
	}
	var sum cas.ID
	if sum, err = cas.ParseID(j.PackSum); err != nil {
		return bad("bad pack sum")
	}
	d.Pack = PackRef{Key: IncrementKey(g+1, pub), Sum: sum, Size: j.PackSize}
	switch {
	case j.Version != descriptorVersion:
		return bad("unknown version")
	case j.Publication != pub || j.ParentGeneration != g:
		return bad("does not match its key")
	case j.PackSize <= 0 || d.Head.IsZero():
		return bad("no pack")
	case !bytes.Equal(EncodeProposal(d), data):
		return bad("not in canonical form")
	}
	return d, nil
}

// Candidate is a registered proposal offered to the include function:
// its descriptor and its pack, size and BLAKE3 checked.
type Candidate struct {
	ProposalDescriptor
	PackData []byte
}

// Member is a proposal re-parented by the include function onto the head
// before it in the group (the writer's own head for the first member).
// It keeps its publication ID; its pack holds every object its head needs
// beyond the previous head of the group.
type Member struct {
	Publication string
	Head        cas.ID
	Pack        []byte
}

// IncludeFunc decides which candidates join a write that accepts own on
// top of observed, in the order given, and returns them re-parented. It
// may return fewer than it was given (those that do not merge cleanly are
// left to their proposers). An error leaves every candidate out.
type IncludeFunc func(ctx context.Context, observed State, own Proposal, cands []Candidate) ([]Member, error)

// PublishGroup is Publish with group commit when Options.GroupCommit is
// set (otherwise it is Publish and include is unused). Accepted.Included
// reports a publication accepted as a member of another writer's group:
// then State is the `current` read that proved it and Generation its
// generation.
func (n *Notebook) PublishGroup(ctx context.Context, build func(ctx context.Context, observed State, publication string) (Proposal, error), include IncludeFunc) (Accepted, error) {
	if !n.opts.GroupCommit || include == nil {
		return n.Publish(ctx, build)
	}
	t0 := n.opts.Now()
	state, err := n.ReadCurrent(ctx)
	if err != nil {
		return Accepted{}, err
	}
	c := n.newGroupCall(NewUUIDv7())
	c.eager = c.inContention(n, state, t0)
	return n.groupAttempts(ctx, c, state, 1, build, include)
}

// continueGroup goes on with group commit after attempt, a publishFrom
// attempt (turns.go: a holder of this machine's turn) with publication
// pub and proposal prop on lost, lost its race to a writer of another
// machine: its retries register like PublishGroup's, under the same
// publication ID, so the writers of several machines that meet join one
// group instead of racing each other to REMOTE_BUSY. The turn has been
// given up (group commit coordinates through the store). With an offering
// o, the search for our ID covers the writes on the generations its
// offers were made on, and an offer that may still be included is settled
// as a registration is.
func (n *Notebook) continueGroup(ctx context.Context, lost State, pub string, prop Proposal, o *offering, attempt int, build func(ctx context.Context, observed State, publication string) (Proposal, error), include IncludeFunc) (Accepted, error) {
	c := n.newGroupCall(pub)
	c.takeOffering(o)
	c.contended = true
	c.note(lost.Generation())
	c.lastETag, c.prop = lost.ETag, prop
	if attempt > n.opts.Retries {
		return c.lostRaces(ctx, n, attempt, errNotAccepted)
	}
	if err := n.opts.Sleep(ctx, n.backoff(attempt, 0)); err != nil {
		return c.stop(ctx, n, err)
	}
	state, err := n.ReadCurrent(ctx)
	if err != nil {
		return c.stop(ctx, n, err)
	}
	return n.groupAttempts(ctx, c, state, attempt+1, build, include)
}

// readInTurn reads `current` for an attempt of a writer that has its
// machine's turn. With group commit (group) it also returns the group
// call the writer joins at once, registering from its first attempt (nil:
// it does not), when `current` is past the state this machine's last
// publication kept (a writer of one machine that takes turns never
// registers because of its neighbours) and, as for PublishGroup's first
// attempt, the writer is in contention: writers of other machines
// publish, and a plain first attempt would race their group's leader and
// break the group up, as it did before first attempts registered on a
// busy tail. Without a kept state (a new machine) contention alone
// decides: making those first attempts plain until one wins and keeps a
// state cost a fleet of ten machines twice the requests
// (docs/benchmarks.md). The caller gives up its turn to join.
func (n *Notebook) readInTurn(ctx context.Context, group bool, o *offering) (State, *groupCall, error) {
	t0 := n.opts.Now()
	state, err := n.ReadCurrent(ctx)
	if err != nil || !group {
		return state, nil, err
	}
	if kept, _ := n.nearbyCurrent(); kept.Manifest != nil && state.Generation() <= kept.Generation() {
		return state, nil, nil
	}
	c := n.newGroupCall(NewUUIDv7())
	if !c.inContention(n, state, t0) {
		return state, nil, nil
	}
	c.takeOffering(o)
	c.eager = true
	return state, c, nil
}

// inContention reports whether a first attempt on state (read since t0)
// registers and joins (or leads) the group of its generation: the writer
// met contention lately (ContentionMemory) or the tail is busy. A tail
// that is all ours since our last publication is a writer committing in a
// row, which stays at three requests.
func (c *groupCall) inContention(n *Notebook, state State, t0 time.Time) bool {
	now := n.opts.Now()
	return c.record.contended(now, state.Generation()) ||
		(state.Generation() != c.record.Generation && tailBusy(state.Manifest, now, now.Sub(t0)))
}

// takeOffering makes c the group call of a writer that took turns and
// offered (o; nil: it did not): the publication is the offering's, the
// search for it covers the writes on the generations its offers were
// made on, and an offer that may still be included is settled as a
// registration is. The offer file is withdrawn: the writer offers no more.
func (c *groupCall) takeOffering(o *offering) {
	if o == nil {
		return
	}
	o.withdraw()
	c.pub = o.pub
	c.attempted = o.attempted
	c.gens = slices.Clone(o.gens) // o makes no more offers, but shares nothing
	c.registered, c.regGen = o.live, o.gen
}

// groupCall is one call's state across its group commit attempts.
type groupCall struct {
	pub       string
	memory    ContentionMemory
	record    ContentionRecord
	eager     bool     // the first attempt registers
	contended bool     // the call met contention (remembered when it ends accepted)
	attempted          // the generations attempted on (writes, registrations, offers)
	lastETag  string   // the state the last proposal was built on
	prop      Proposal // that proposal
	follows   int      // attempts that left the write to a leader (not counted as retries)
	// registered: a descriptor of ours on regGen may still be included by
	// that generation's leader until `current` is past it.
	registered bool
	regGen     uint64
}

func (n *Notebook) newGroupCall(pub string) *groupCall {
	memory := n.contention()
	return &groupCall{pub: pub, memory: memory, record: memory.Load()}
}

// remember is called once the call ends accepted.
func (c *groupCall) remember(n *Notebook, known State) {
	now := n.opts.Now()
	c.record.Published, c.record.Generation = now, known.Generation()
	if c.contended {
		c.record.Contended = now
	}
	c.memory.Save(c.record)
}

// stop ends the call with err, unless a descriptor of ours may still be
// included: then settle decides (a cancelled context included).
func (c *groupCall) stop(ctx context.Context, n *Notebook, err error) (Accepted, error) {
	if c.registered {
		return n.settle(ctx, c.regGen, c.attempted, c.pub, 0, err)
	}
	return Accepted{}, err
}

// lostRaces ends a call whose retries ran out after attempt lost with err.
func (c *groupCall) lostRaces(ctx context.Context, n *Notebook, attempt int, err error) (Accepted, error) {
	cause := fmt.Errorf("%w: %d attempts: %w", ErrLostRace, attempt, err)
	c.record.Contended = n.opts.Now()
	c.memory.Save(c.record)
	if c.registered {
		return n.settle(ctx, c.regGen, c.attempted, c.pub, attempt, cause)
	}
	return Accepted{}, cause
}

// groupAttempts runs c's attempts from attempt on, state read.
func (n *Notebook) groupAttempts(ctx context.Context, c *groupCall, state State, attempt int, build func(ctx context.Context, observed State, publication string) (Proposal, error), include IncludeFunc) (Accepted, error) {
	pub := c.pub
	followLimit := 4 * (n.opts.Retries + 1)
	for ; ; attempt++ {
		var err error
		if c.tried {
			inc, ok, err := n.acceptedSince(ctx, state, c.attempted, pub)
			if err != nil {
				return c.stop(ctx, n, err)
			}
			if ok {
				c.contended = true
				c.remember(n, state)
				if n.opts.Observe != nil {
					_ = n.opts.Observe(ctx, state)
				}
				return Accepted{State: state, Publication: pub, Attempts: attempt - 1, Published: true, Included: inc.Generation}, nil
			}
		}
		reuse := c.tried && state.ETag == c.lastETag
		if !reuse {
			c.prop, err = build(ctx, state, pub)
			if err == nil && c.prop.Ready != nil {
				err = c.prop.Ready() // before it may be registered (Proposal.Ready)
			}
			if errors.Is(err, ErrStale) && attempt <= n.opts.Retries && n.moved(ctx, state) {
				err = fmt.Errorf("%w: %w", errNotAccepted, err)
			} else if err != nil {
				return c.stop(ctx, n, err)
			}
		}
		if err == nil && c.prop.Skip {
			return Accepted{State: state, Attempts: attempt}, nil
		}
		var next State
		var members int
		if err == nil {
			if attempt > 1 && !reuse && n.moved(ctx, state) {
				err = fmt.Errorf("%w: current moved past generation %d while the retry was built: %w", errNotAccepted, state.Generation(), ErrPrecondition)
			} else {
				c.note(state.Generation())
				c.lastETag = state.ETag
				register := attempt > 1 || c.eager
				if register {
					c.registered, c.regGen = true, state.Generation() // from the descriptor's Put on, it may be included
				}
				next, members, err = n.groupAttempt(ctx, state, pub, c.prop, register, reuse, include)
			}
		}
		if early := (*acceptedEarlier)(nil); errors.As(err, &early) {
			c.contended = true
			c.remember(n, early.state)
			return n.acceptEarlier(ctx, early, attempt), nil
		}
		if err == nil {
			if n.opts.Observe != nil {
				_ = n.opts.Observe(ctx, State{Manifest: next.Manifest})
			}
			if c.registered {
				n.group.writes.Add(1)
				n.group.members.Add(int64(members))
			}
			c.contended = c.contended || members > 0
			c.remember(n, next)
			return Accepted{State: next, Publication: pub, Attempts: attempt, Published: true, Members: members}, nil
		}
		if !errors.Is(err, errNotAccepted) {
			if c.registered {
				return n.settle(ctx, c.regGen, c.attempted, pub, attempt, err)
			}
			return Accepted{}, err
		}
		c.contended = true // a lost race, or another writer leads
		if errors.Is(err, errFollow) && c.follows < followLimit {
			// Not a lost race: wait for the leader's write (or for its
			// absence to show), then go on from the `current` that
			// shows it. The leader waits FirstWait for the others to
			// register, then lists, reads and writes: some five round
			// trips more. So the first read comes when that is likely
			// done, later ones at growing intervals, and each is a GET
			// of `current`: the read that shows the write is the one
			// the next attempt needs anyway.
			c.follows++
			attempt--
			rtt := time.Duration(n.group.rtt.Load())
			wait := n.opts.FirstWait + 5*rtt
			for waited := time.Duration(0); ; {
				if err := n.opts.Sleep(ctx, wait); err != nil {
					return c.stop(ctx, n, err)
				}
				waited += wait
				st, err := n.ReadCurrent(ctx)
				if err != nil {
					return c.stop(ctx, n, err)
				}
				if st.ETag != state.ETag || waited >= followWait {
					state = st
					break
				}
				wait = min(max(wait*3/2, 2*rtt), followMaxPoll)
			}
			// The follow is over: whatever `current` shows, the next
			// attempt decides afresh. (Left set, this error made an
			// attempt on an unmoved `current`, the one that must lead
			// because the leader may be gone, follow again: a dead
			// leader held its followers for 4 × (retries + 1) follow
			// waits, three minutes.)
			continue
		}
		if attempt > n.opts.Retries {
			return c.lostRaces(ctx, n, attempt, err)
		}
		// Full jitter below FirstWait, doubling per lost race, but not
		// stretched to the lost attempt's window as §4's is: the retry
		// registers, so it joins the next group instead of colliding
		// again; a window-long wait (seconds, when a conditional write
		// met SeaweedFS's lock) only made it the last commit of a run.
		if err := n.opts.Sleep(ctx, n.backoff(attempt, 0)); err != nil {
			return c.stop(ctx, n, err)
		}
		if state, err = n.ReadCurrent(ctx); err != nil {
			return c.stop(ctx, n, err)
		}
	}
}

// settle decides a Publish that stops (retries exhausted, a store error)
// while a descriptor of ours registered on generation g may still be
// included: it reads `current` until it is past g (then the descriptor is
// dead and the verdict final: accepted if our ID is there, else cause) or
// the polls run out (ErrAmbiguous). It runs even if ctx is cancelled, like
// resolveAt: the caller must learn whether its change was accepted.
func (n *Notebook) settle(ctx context.Context, g uint64, tried attempted, pub string, attempts int, cause error) (Accepted, error) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), resolveTimeout)
	defer cancel()
	for poll := 0; ; poll++ {
		st, err := n.ReadCurrent(rctx)
		if err == nil {
			inc, ok, ferr := n.acceptedSince(rctx, st, tried, pub)
			switch {
			case ferr == nil && ok:
				return Accepted{State: st, Publication: pub, Attempts: attempts, Published: true, Included: inc.Generation}, nil
			case ferr == nil && st.Generation() > g:
				return Accepted{}, cause // every attempt of ours is decided: none was accepted
			}
		}
		if poll >= followPolls {
			return Accepted{}, fmt.Errorf("remote: publication %s: %w: its proposal on generation %d may still be included (%w)", pub, ErrAmbiguous, g, cause)
		}
		if err := n.opts.Sleep(rctx, n.opts.FirstWait); err != nil {
			return Accepted{}, fmt.Errorf("remote: publication %s: %w: %w", pub, ErrAmbiguous, cause)
		}
	}
}

// attempted records the generations a call's offers, attempts and
// registrations were made on, each a state that was `current`: its
// publication can only have been accepted by a write conditional on one of
// them (acceptedSince).
type attempted struct {
	tried bool     // one was made
	top   uint64   // the highest generation one was made on
	gens  []uint64 // the generations not known to be decided, ascending
}

// note records one made on generation g.
func (a *attempted) note(g uint64) {
	a.tried = true
	a.top = max(a.top, g)
	i, found := slices.BinarySearch(a.gens, g)
	if !found {
		a.gens = slices.Insert(a.gens, i, g)
	}
}

// decided records that a state past every generation noted does not name
// the publication: none of them can be accepted any more, so no search
// need look at them again.
func (a *attempted) decided() { a.gens = nil }

// historyStep is how many generations writeOn reads at a time: a
// level-1 segment's worth.
const historyStep = SegmentFanout

// acceptedSince looks for pub among the publications of state that a
// write conditional on a generation of tried can have named (writeOn).
// The generations between those writes, other writers' whatever their
// number, are never read: a writer whose offer was fifty generations
// behind `current` reads a segment or two, not every segment between.
func (n *Notebook) acceptedSince(ctx context.Context, state State, tried attempted, pub string) (Increment, bool, error) {
	for _, a := range tried.gens {
		if a >= state.Generation() {
			break
		}
		run, err := n.writeOn(ctx, state, a)
		if err != nil {
			return Increment{}, false, fmt.Errorf("remote: publication %s: read the history: %w", pub, err)
		}
		for _, inc := range run {
			if inc.Publication == pub {
				return inc, true, nil
			}
		}
	}
	return Increment{}, false, nil
}

// writeOn returns the increments that the write of state's history
// conditional on generation a named. Such a write names a+1 first and
// gives every generation it names one time (docs/storage.md §4B), so it is
// the run from a+1 on that shares a+1's time, read until the first
// generation whose time differs or that has no increment (a checkpoint
// swap). Empty when a+1 has no increment.
func (n *Notebook) writeOn(ctx context.Context, state State, a uint64) ([]Increment, error) {
	g := state.Generation()
	var run []Increment
	for from := a + 1; from <= g; from += historyStep {
		to := min(g, from+historyStep-1)
		incs, err := n.Publications(ctx, state, from, to)
		if err != nil {
			return nil, err
		}
		for i, inc := range incs {
			if inc.Generation != from+uint64(i) || len(run) > 0 && !sameWrite(run[len(run)-1], inc) {
				return run, nil
			}
			run = append(run, inc)
		}
		if len(incs) < int(to-from+1) {
			return run, nil
		}
	}
	return run, nil
}

// sameWrite reports whether inc can have been named by the write that
// named prev: a write names consecutive generations and gives them all one
// time (docs/storage.md §4B).
func sameWrite(prev, inc Increment) bool {
	return inc.Generation == prev.Generation+1 && inc.Time == prev.Time
}

// groupAttempt uploads our pack (a retry also registers it and gathers
// the registered proposals of the same generation), then conditionally
// replaces `current` with the manifest accepting ours and the members.
func (n *Notebook) groupAttempt(ctx context.Context, observed State, pub string, prop Proposal, register, reuse bool, include IncludeFunc) (State, int, error) {
	ref, err := groupRef(observed, pub, prop)
	if err != nil {
		return State{}, 0, err
	}
	if !register { // a first attempt (never a reused one): §4's
		next, at, err := n.extendAt(observed, pub, prop, ref)
		if err != nil {
			return State{}, 0, err
		}
		// An unconditional put: a member pack a helper created under
		// this key can only come from a write conditional on an older
		// generation, which can no longer win.
		if err := n.store.Put(ctx, ref.Key, prop.Pack); err != nil {
			return State{}, 0, fmt.Errorf("remote: upload pack: %w", notAmbiguous(err))
		}
		return n.writeGroup(ctx, observed, pub, prop, next, at, nil, true, nil)
	}
	// The registration carries the pack: a leader that includes it reads
	// one object, and a follower puts its pack nowhere else (a leader
	// creates it at the member's generation). Only a writer that writes
	// puts it at its own key, while it gathers.
	desc := ProposalDescriptor{Publication: pub, ParentGeneration: observed.Generation(), Parent: observed.Head(), Head: prop.Head, Pack: ref}
	if err := n.store.Put(ctx, ProposalKey(desc.ParentGeneration, pub), EncodeRegistration(desc, prop.Pack)); err != nil {
		return State{}, 0, fmt.Errorf("remote: register proposal: %w", notAmbiguous(err))
	}
	// One writer per generation leads: the first to create the lead
	// marker proposals/<G>-lead. The others follow (no write): back off
	// and read `current`, where the leader's write names them. When
	// `current` did not move since our last attempt the leader may be
	// gone, and we write ourselves.
	if !reuse {
		// A HEAD first: on SeaweedFS a conditional create that meets
		// another one on the same key waits a second for its lock, and
		// the losers of one race all try the next lead marker within a
		// few milliseconds of each other.
		key := leadKey(observed.Generation())
		t0 := n.opts.Now()
		_, err := n.store.Head(ctx, key)
		if err == nil {
			err = fmt.Errorf("%w: the lead marker exists", ErrPrecondition)
		} else {
			_, err = n.store.CreateIfAbsent(ctx, key, []byte(pub+"\n"))
		}
		if rtt := n.opts.Now().Sub(t0); rtt < maxFollowRTT {
			n.group.rtt.Store(int64(rtt)) // what a follower's first wait is scaled by
		}
		switch {
		case errors.Is(err, ErrPrecondition), errors.Is(err, ErrRateLimited):
			// A rate-limited create met other writers' creates of the
			// same marker (R2, GCS): one of them leads.
			return State{}, 0, fmt.Errorf("%w: %w: another writer leads generation %d", errNotAccepted, errFollow, observed.Generation())
		case err != nil:
			return State{}, 0, fmt.Errorf("remote: lead proposals: %w", notAmbiguous(err))
		}
	}
	uploaded := make(chan error, 1)
	go func() { uploaded <- n.store.Put(ctx, ref.Key, prop.Pack) }()
	if !reuse {
		// Give the other losers of the last race a moment to register:
		// they rebuild on the same state as we did, a round trip or two
		// apart.
		if err := n.opts.Sleep(ctx, n.opts.FirstWait+2*time.Duration(n.group.rtt.Load())); err != nil {
			<-uploaded
			return State{}, 0, err
		}
	}
	members := n.gather(ctx, observed, pub, prop, include)
	// The group's time is its write's, not its build's: the wait and the
	// gathering took several round trips, and readers judge by it whether
	// the rollups the write ends are built yet (freshFrom) and how busy
	// the fleet is (tailBusy). A proposal the extension refuses was
	// registered meanwhile; any leader that includes it extends with it
	// too, and refuses it the same way.
	next, at, err := n.extendAt(observed, pub, prop, ref)
	if err != nil {
		<-uploaded
		return State{}, 0, err
	}
	return n.writeGroup(ctx, observed, pub, prop, next, at, members, true, uploaded)
}

// extendGroup checks our proposal on observed and returns the manifest
// accepting it at the next generation (its segments uploaded on their
// own: members follow it), our pack's ref and the publication time,
// which the members share.
func (n *Notebook) extendGroup(observed State, pub string, prop Proposal) (*Manifest, PackRef, uint64, error) {
	ref, err := groupRef(observed, pub, prop)
	if err != nil {
		return nil, PackRef{}, 0, err
	}
	next, at, err := n.extendAt(observed, pub, prop, ref)
	return next, ref, at, err
}

// groupRef checks our proposal on observed and returns its pack's
// reference at the next generation.
func groupRef(observed State, pub string, prop Proposal) (PackRef, error) {
	if err := checkProposal(prop, observed.Head(), pub); err != nil {
		return PackRef{}, err
	}
	gen, err := NextGeneration(observed.Generation())
	if err != nil {
		return PackRef{}, err
	}
	return PackRef{Key: IncrementKey(gen, pub), Sum: cas.Sum(prop.Pack), Size: int64(len(prop.Pack))}, nil
}

// extendAt returns observed's manifest accepting our proposal (ref) now,
// and the time it gives the publication.
func (n *Notebook) extendAt(observed State, pub string, prop Proposal, ref PackRef) (*Manifest, uint64, error) {
	at := uint64(n.opts.Now().UnixMilli())
	next, err := observed.Manifest.ExtendAt(pub, prop.Head, ref, at)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %v", ErrInvalidProposal, err)
	}
	return next, at, nil
}

// writeGroup conditionally replaces `current` (observed) with next, the
// manifest accepting our own proposal at its generation, extended by the
// members that follow it: each is validated and named at the next
// generation, and the group pack is uploaded when groupPack is set. It
// returns the state written and how many members it accepts.
//
// What the write names goes up at once: the member packs are created
// (CreateIfAbsent: another helper's bytes under a key keep that member
// and the ones after it out), the segments of every fold are put, and
// our own pack's upload (ownUpload; nil when it is in the store already)
// finishes meanwhile. Sequential, they were most of a turn on SeaweedFS
// (our pack, then the members', then the segments: 60 to 100 ms of a 125
// ms turn at 10 writers). A segment of a member left out is then an
// unreferenced object, removed with its generation's history as a lost
// race's pack is (cleanup.go).
func (n *Notebook) writeGroup(ctx context.Context, observed State, pub string, prop Proposal, next *Manifest, at uint64, members []Member, groupPack bool, ownUpload <-chan error) (State, int, error) {
	uploads := append([]segmentBlob(nil), next.uploads...) // our fold's; next is replaced by the last member's
	gen := next.Generation
	prev := prop.Head
	type step struct {
		m    *Manifest
		ref  PackRef
		pack []byte
	}
	var steps []step
	for i, m := range members {
		g := gen + 1 + uint64(i)
		if err := checkProposal(Proposal{Pack: m.Pack, Head: m.Head}, prev, m.Publication); err != nil {
			break
		}
		mref := PackRef{Key: IncrementKey(g, m.Publication), Sum: cas.Sum(m.Pack), Size: int64(len(m.Pack))}
		last := next
		if len(steps) > 0 {
			last = steps[len(steps)-1].m
		}
		grown, err := last.ExtendAt(m.Publication, m.Head, mref, at)
		if err != nil {
			break
		}
		steps = append(steps, step{m: grown, ref: mref, pack: m.Pack})
		prev = m.Head
	}
	segments := uploads
	for _, st := range steps {
		segments = append(segments[:len(segments):len(segments)], st.m.uploads...)
	}
	created := make([]bool, len(steps))
	segErrs := make([]error, len(segments))
	var wg sync.WaitGroup
	if len(steps) > 0 && groupPack {
		// Best effort, and beside the creates rather than after them:
		// without it a member reads the increments. It holds every
		// member built, also one whose create then fails; FetchGroupPack
		// counts a generation only when the accepted increment's head is
		// in it, so the extra objects are never taken for a generation.
		packs := [][]byte{prop.Pack}
		for _, st := range steps {
			packs = append(packs, st.pack)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if data, err := unionPack(packs); err == nil {
				_ = n.store.Put(ctx, GroupPackKey(observed.Generation(), pub), data)
			}
		}()
	}
	for i, st := range steps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Another helper's bytes, or a store failure: this member
			// and the ones built on it stay out.
			_, err := n.store.CreateIfAbsent(ctx, st.ref.Key, st.pack)
			created[i] = err == nil
		}()
	}
	for i, b := range segments {
		wg.Add(1)
		go func() {
			defer wg.Done()
			segErrs[i] = n.store.Put(ctx, b.ref.Key(), b.data)
		}()
	}
	wg.Wait()
	if ownUpload != nil {
		if err := <-ownUpload; err != nil {
			return State{}, 0, fmt.Errorf("remote: upload pack: %w", notAmbiguous(err))
		}
	}
	for _, err := range segErrs {
		if err != nil {
			return State{}, 0, fmt.Errorf("remote: upload segment: %w", notAmbiguous(err))
		}
	}
	kept := 0
	for kept < len(steps) && created[kept] {
		uploads = append(uploads, steps[kept].m.uploads...)
		next = steps[kept].m
		kept++
	}
	members = members[:kept]
	next.uploads = uploads
	data := encodeManifest(next)
	var etag string
	var err error
	if observed.ETag == "" {
		etag, err = n.store.CreateIfAbsent(ctx, CurrentKey, data)
	} else {
		etag, err = n.store.ReplaceIfMatch(ctx, CurrentKey, data, observed.ETag)
	}
	switch {
	case err == nil:
		return State{Manifest: next, ETag: etag, encoded: data}, len(members), nil
	case errors.Is(err, ErrPrecondition), errors.Is(err, ErrRateLimited):
		return State{}, 0, fmt.Errorf("%w: lost the race for generation %d: %w", errNotAccepted, gen, err)
	case errors.Is(err, ErrUnavailable), errors.Is(err, ErrAccessDenied), errors.Is(err, ErrInvalidKey):
		return State{}, 0, fmt.Errorf("remote: replace current: %w", err)
	default:
		st, err := n.resolveAt(ctx, next, gen, pub, err)
		return st, len(members), err
	}
}

// gather lists the proposals registered on observed's generation and asks
// include which of them join. Any failure here only leaves proposals out.
func (n *Notebook) gather(ctx context.Context, observed State, pub string, own Proposal, include IncludeFunc) []Member {
	infos, err := n.store.List(ctx, proposalPrefix(observed.Generation()))
	if err != nil {
		return nil
	}
	var keys []string
	for _, info := range infos {
		g, p, err := parseProposalKey(info.Key)
		if err != nil || g != observed.Generation() || p == pub {
			continue
		}
		if observed.Manifest != nil {
			if _, done := observed.Manifest.FindPublication(p); done {
				continue
			}
		}
		keys = append(keys, info.Key)
	}
	sort.Strings(keys)
	limit := n.opts.MaxGroup
	if limit <= 0 {
		limit = DefaultMaxGroup
	}
	if len(keys) > limit {
		keys = keys[:limit]
	}
	cands := make([]*Candidate, len(keys))
	var wg sync.WaitGroup
	for i, key := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			data, _, err := n.store.Get(ctx, key)
			if err != nil {
				return
			}
			d, pack, err := DecodeRegistration(key, data)
			if err != nil || d.Parent != observed.Head() {
				return
			}
			if pack == nil { // registered by an older build: its pack is at its key
				if pack, err = n.FetchPack(ctx, d.Pack); err != nil {
					return
				}
			}
			cands[i] = &Candidate{ProposalDescriptor: d, PackData: pack}
		}()
	}
	wg.Wait()
	var ok []Candidate
	for _, c := range cands {
		if c != nil {
			ok = append(ok, *c)
		}
	}
	if len(ok) == 0 {
		return nil
	}
	members, err := include(ctx, observed, own, ok)
	if err != nil {
		return nil
	}
	return checkedMembers(pub, ok, members)
}

// checkedMembers is the prefix of what include returned that names
// offered candidates, each once, never our own publication pub.
func checkedMembers(pub string, cands []Candidate, members []Member) []Member {
	seen := map[string]bool{pub: true}
	allowed := map[string]bool{}
	for _, c := range cands {
		allowed[c.Publication] = true
	}
	for i, m := range members {
		if seen[m.Publication] || !allowed[m.Publication] {
			return members[:i]
		}
		seen[m.Publication] = true
	}
	return members
}

// CleanProposals deletes the descriptors registered on generations below
// `current`'s: only a write conditional on a descriptor's own generation
// can include it, so once `current` is past it nothing can. It returns the
// keys deleted.
func (n *Notebook) CleanProposals(ctx context.Context) ([]string, error) {
	state, err := n.ReadCurrent(ctx)
	if err != nil {
		return nil, err
	}
	infos, err := n.store.List(ctx, ProposalsPrefix)
	if err != nil {
		return nil, err
	}
	var deleted []string
	for _, info := range infos {
		g, _, err := parseProposalKey(strings.TrimSuffix(info.Key, groupPackSuffix))
		if err != nil {
			g, err = parseLeadKey(info.Key)
		}
		if err != nil || g >= state.Generation() {
			continue
		}
		if err := n.store.Delete(ctx, info.Key); err != nil && !errors.Is(err, ErrNotFound) {
			return deleted, err
		}
		deleted = append(deleted, info.Key)
	}
	return deleted, nil
}

// unionPack is one pack holding every object of packs.
func unionPack(packs [][]byte) ([]byte, error) {
	w := cas.NewPackWriter()
	for _, data := range packs {
		p, err := cas.OpenPack(data)
		if err != nil {
			return nil, err
		}
		for _, id := range p.IDs() {
			o, err := p.Get(id)
			if err != nil {
				return nil, err
			}
			if err := w.Put(o); err != nil {
				return nil, err
			}
		}
	}
	return w.Finish()
}

// FetchGroupPack reads the group pack of the write that accepted the
// proposals registered on parentGeneration of state: the writer is the
// one whose increment is parentGeneration+1. It returns the pack and the
// last generation of the group whose head it holds, counting on from
// parentGeneration+1 while each increment's head is in it (so a pack that
// is not the accepted group's covers nothing). ErrNotFound when there is
// none.
func (n *Notebook) FetchGroupPack(ctx context.Context, state State, parentGeneration uint64) (GroupPack, error) {
	if state.Generation() <= parentGeneration+1 {
		return GroupPack{}, ErrNotFound // a group has two generations at least
	}
	// The group is the write conditional on parentGeneration: one
	// generation alone is no group, and no group pack is asked for.
	incs, err := n.writeOn(ctx, state, parentGeneration)
	if err != nil || len(incs) < 2 {
		return GroupPack{}, fmt.Errorf("remote: group pack: %w", errors.Join(ErrNotFound, err))
	}
	gp := GroupPack{Key: GroupPackKey(parentGeneration, incs[0].Publication), Last: parentGeneration}
	if n.opts.Nearby != nil {
		gp.Data = n.opts.Nearby.Pack(gp.Key) // a turn's group (offers.go); its objects are checked by ID as any
	}
	if gp.Data == nil {
		if gp.Data, _, err = n.store.Get(ctx, gp.Key); err != nil {
			return GroupPack{}, err
		}
	}
	p, err := cas.OpenPack(gp.Data)
	if err != nil {
		return GroupPack{}, fmt.Errorf("remote: group pack: %w", err)
	}
	for _, inc := range incs {
		if inc.Generation != gp.Last+1 {
			break
		}
		if _, err := p.Get(inc.Head); err != nil {
			break
		}
		gp.Last, gp.Head = inc.Generation, inc.Head
	}
	return gp, nil
}

// GroupPack is a group pack read by FetchGroupPack: it holds every object
// the increments after the group's parent generation through Last need
// (Head is Last's head).
type GroupPack struct {
	Key  string
	Data []byte
	Last uint64
	Head cas.ID
}
