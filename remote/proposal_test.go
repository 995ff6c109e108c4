package remote_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

func TestProposalDescriptorRoundTrip(t *testing.T) {
	d := remote.ProposalDescriptor{
		Publication: remote.NewUUIDv7(), ParentGeneration: 41,
		Parent: cas.Sum([]byte("parent")), Head: cas.Sum([]byte("head")),
	}
	d.Pack = remote.PackRef{Key: remote.IncrementKey(42, d.Publication), Sum: cas.Sum([]byte("pack")), Size: 1234}
	key := remote.ProposalKey(41, d.Publication)
	if want := "proposals/00000000000000000041-" + d.Publication; key != want {
		t.Fatalf("key %q, want %q", key, want)
	}
	data := remote.EncodeProposal(d)
	got, err := remote.DecodeProposal(key, data)
	if err != nil || got != d {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	for name, bad := range map[string][]byte{
		"reordered":     bytes.Replace(data, []byte(`{"version":1,`), []byte(`{ "version":1,`), 1),
		"unknown field": bytes.Replace(data, []byte(`{"version":1,`), []byte(`{"version":1,"x":1,`), 1),
		"other version": bytes.Replace(data, []byte(`{"version":1,`), []byte(`{"version":2,`), 1),
		"no newline":    bytes.TrimSuffix(data, []byte("\n")),
	} {
		if _, err := remote.DecodeProposal(key, bad); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
	if _, err := remote.DecodeProposal(remote.ProposalKey(40, d.Publication), data); err == nil {
		t.Error("a descriptor under another generation's key decoded")
	}
}

// groupWriter publishes with group commit: its build adds files to the
// observed tree; its include re-parents every candidate (whole trees, all
// objects in the member's pack).
type groupWriter struct {
	*treeWriter
}

func newGroupWriter(store remote.Store) groupWriter {
	return newGroupWriterAt(store, nil)
}

// newGroupWriterAt is newGroupWriter on the clock now (nil: the real one).
func newGroupWriterAt(store remote.Store, now func() time.Time) groupWriter {
	w := newTreeWriter(store)
	w.nb = remote.Open(store, remote.Options{Sleep: fastSleep, GroupCommit: true, Now: now})
	return groupWriter{w}
}

// spacedClock is a clock on which every reading is a minute after the
// one before: writers on it publish a minute apart, so `current`'s tail
// never shows a busy fleet and only a lost race makes a first attempt
// register.
func spacedClock() func() time.Time {
	var mu sync.Mutex
	t := time.Unix(1800000000, 0)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Minute)
		return t
	}
}

// tickingClock is a clock on which every reading is a millisecond after
// the one before: writers sharing it publish a few readings apart, so
// `current`'s tail shows a busy fleet however loaded the machine is (on
// the real clock, a loaded machine spread three writers out until the
// tail looked quiet and the first attempt did not register).
func tickingClock() func() time.Time {
	var mu sync.Mutex
	t := time.Unix(1800000000, 0)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Millisecond)
		return t
	}
}

func (w groupWriter) filesOf(ctx context.Context, state remote.State, extra ...[]byte) (map[string][]byte, chainSource, error) {
	src, err := w.chainPacks(ctx, state)
	if err != nil {
		return nil, src, err
	}
	for _, data := range extra {
		p, err := cas.OpenPack(data)
		if err != nil {
			return nil, src, err
		}
		src.packs = append(src.packs, p)
	}
	files, err := readFiles(src, state.Head())
	return files, src, err
}

func packFiles(files map[string][]byte, parent cas.ID, pub string, when time.Time, msg []byte) (remote.Proposal, error) {
	pw := cas.NewPackWriter()
	ids := map[string]cas.ID{}
	for p, c := range files {
		id, err := cas.WriteFile(pw, c)
		if err != nil {
			return remote.Proposal{}, err
		}
		ids[p] = id
	}
	tree, err := cas.WriteTree(pw, ids)
	if err != nil {
		return remote.Proposal{}, err
	}
	commit := cas.EncodeCommit(cas.Commit{Tree: tree, Parent: parent, Publication: pub, Time: when, Message: msg})
	if err := pw.Put(commit); err != nil {
		return remote.Proposal{}, err
	}
	pack, err := pw.Finish()
	return remote.Proposal{Pack: pack, Head: commit.ID}, err
}

func (w groupWriter) publish(ctx context.Context, path string, onBuild func(attempt int)) (remote.Accepted, error) {
	return w.publishWith(ctx, path, onBuild, w.nb.PublishGroup)
}

// publishWith is publish through another of the notebook's publish calls.
func (w groupWriter) publishWith(ctx context.Context, path string, onBuild func(attempt int), publish func(context.Context, func(context.Context, remote.State, string) (remote.Proposal, error), remote.IncludeFunc) (remote.Accepted, error)) (remote.Accepted, error) {
	attempt := 0
	build := func(ctx context.Context, observed remote.State, pub string) (remote.Proposal, error) {
		attempt++
		if onBuild != nil {
			onBuild(attempt)
		}
		files, _, err := w.filesOf(ctx, observed)
		if err != nil {
			return remote.Proposal{}, err
		}
		files = maps.Clone(files)
		files[path] = []byte(path + "\n")
		return packFiles(files, observed.Head(), pub, time.Unix(1700000000, 0), []byte("add "+path))
	}
	include := func(ctx context.Context, observed remote.State, own remote.Proposal, cands []remote.Candidate) ([]remote.Member, error) {
		base, src, err := w.filesOf(ctx, observed, own.Pack)
		if err != nil {
			return nil, err
		}
		cur, err := readFiles(src, own.Head)
		if err != nil {
			return nil, err
		}
		prev := own.Head
		var out []remote.Member
		for _, c := range cands {
			p, err := cas.OpenPack(c.PackData)
			if err != nil {
				return nil, err
			}
			theirSrc := chainSource{packs: append([]*cas.Pack{p}, src.packs...)}
			theirs, err := readFiles(theirSrc, c.Head)
			if err != nil {
				return nil, err
			}
			o, _ := p.Get(c.Head)
			cm, _ := cas.DecodeCommit(o)
			next := maps.Clone(cur)
			for path, content := range theirs {
				if !bytes.Equal(base[path], content) {
					next[path] = content
				}
			}
			m, err := packFiles(next, prev, c.Publication, cm.Time, cm.Message)
			if err != nil {
				return nil, err
			}
			out = append(out, remote.Member{Publication: c.Publication, Head: m.Head, Pack: m.Pack})
			cur, prev = next, m.Head
		}
		return out, nil
	}
	return publish(ctx, build, include)
}

// replaceHookStore runs a hook before each conditional replace of `current`.
type replaceHookStore struct {
	*memstore.Mem
	before func(n int)
	n      int
}

func (h *replaceHookStore) ReplaceIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	if key == remote.CurrentKey && h.before != nil {
		h.n++
		h.before(h.n)
	}
	return h.Mem.ReplaceIfMatch(ctx, key, data, etag)
}

// A proposer that registered is accepted by a helper's write: it learns
// that by reading `current`, reports the generation it was accepted at,
// and never publishes its ID a second time; the helper's write accepts
// both, each at its own generation with its own message; the next
// publication reads nothing stale. Stale descriptors are cleaned up.
func TestGroupCommitProposerAcceptedByHelper(t *testing.T) {
	ctx := context.Background()
	mem := memstore.New()
	store := &replaceHookStore{Mem: mem}
	// Writers a minute apart: the helper's first attempt races (a busy
	// tail would make it register and follow the proposer's lead).
	clock := spacedClock()
	seed := newGroupWriterAt(store, clock)
	if _, err := seed.publish(ctx, "seed.md", nil); err != nil {
		t.Fatal(err)
	}
	proposer, rival, helper := newGroupWriterAt(store, clock), newGroupWriterAt(store, clock), newGroupWriterAt(store, clock)
	var helperAcc remote.Accepted
	var helperErr error
	store.before = func(n int) {
		if n == 1 { // the proposer's first write: a rival wins generation 2 first
			store.before = nil
			if _, err := rival.publish(ctx, "rival.md", nil); err != nil {
				t.Error(err)
			}
		}
	}
	// The proposer's second write (after registering on generation 2)
	// meets a helper that registered too and listed it.
	proposerBuilds := 0
	acc, err := proposer.publish(ctx, "proposer.md", func(attempt int) {
		proposerBuilds = attempt
		if attempt == 2 {
			store.before = func(n int) {
				store.before = nil
				// The helper's first write loses to a scripted race; its
				// retry registers, lists the proposer and includes it.
				mem.Inject(memstore.Fault{Op: memstore.OpReplace, KeyPrefix: remote.CurrentKey, Before: remote.ErrPrecondition})
				helperAcc, helperErr = helper.publish(ctx, "helper.md", nil)
			}
		}
	})
	if err != nil || helperErr != nil {
		t.Fatalf("proposer: %v; helper: %v", err, helperErr)
	}
	if helperAcc.Members != 1 || helperAcc.State.Generation() != 4 {
		t.Fatalf("helper: %d members, generation %d; want 1, 4", helperAcc.Members, helperAcc.State.Generation())
	}
	if !acc.Published || acc.Included != 4 {
		t.Fatalf("proposer: published %t, included at %d; want true, 4", acc.Published, acc.Included)
	}
	if proposerBuilds != 2 {
		t.Fatalf("the proposer built %d attempts, want 2 (none after it was accepted)", proposerBuilds)
	}
	nb := remote.Open(mem, remote.Options{})
	state, err := nb.ReadCurrent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	incs, err := nb.Publications(ctx, state, 1, state.Generation())
	if err != nil {
		t.Fatal(err)
	}
	if len(incs) != 4 || incs[3].Publication != acc.Publication || incs[2].Publication != helperAcc.Publication {
		t.Fatalf("history %+v", incs)
	}
	files := headFiles(t, mem)
	for _, p := range []string{"seed.md", "rival.md", "proposer.md", "helper.md"} {
		if string(files[p]) != p+"\n" {
			t.Errorf("%s: %q", p, files[p])
		}
	}
	if rep := mustVerify(t, mem); rep == nil {
		t.Fatal("no report")
	}
	// The helper's write put the group pack: it holds generations 3 and 4.
	gp, err := nb.FetchGroupPack(ctx, state, 2)
	if err != nil || gp.Key != remote.GroupPackKey(2, helperAcc.Publication) || gp.Last != 4 || gp.Head != incs[3].Head {
		t.Fatalf("group pack %s through %d, %v", gp.Key, gp.Last, err)
	}
	if _, err := nb.FetchGroupPack(ctx, state, 1); !errors.Is(err, remote.ErrNotFound) {
		t.Fatalf("a generation nobody led: %v", err)
	}
	// A reader of the fleet (group commit on) that reached generation 2
	// reads generations 3 and 4 from the group pack: one GET, not two.
	fleetReader := remote.Open(mem, remote.Options{GroupCommit: true})
	catchUp := func(nb *remote.Notebook) (remote.CatchUpStats, []string, int) {
		t.Helper()
		gets := mem.Calls(memstore.OpGet)
		var keys []string
		stats, err := nb.CatchUp(ctx, state, 2, 4, nil, func(packs []remote.CaughtUpPack) error {
			for _, p := range packs {
				keys = append(keys, p.Key)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// Nobody built the rollup of generations 1-4: its absent GET
		// (stats.Missing) comes first, then the increments.
		return stats, keys, mem.Calls(memstore.OpGet) - gets - stats.Missing
	}
	if stats, keys, gets := catchUp(fleetReader); stats.Groups != 1 || gets != 1 || !slices.Equal(keys, []string{gp.Key}) {
		t.Fatalf("catch-up over the group: %+v, %d GETs, kept %v; want the group pack alone", stats, gets, keys)
	}
	// Without group commit a reader expects no group packs: the increments.
	if stats, keys, gets := catchUp(nb); stats.Groups != 0 || gets != 2 || len(keys) != 2 {
		t.Fatalf("catch-up without group commit: %+v, %d GETs, kept %v; want the 2 increments", stats, gets, keys)
	}
	// Both descriptors, the proposer's lead marker and the group pack
	// were written on generation 2; `current` is past it, so cleanup
	// removes them.
	deleted, err := nb.CleanProposals(ctx)
	if err != nil || len(deleted) != 4 {
		t.Fatalf("cleanup deleted %v, %v; want the 2 descriptors, the lead marker and the group pack", deleted, err)
	}
	for _, k := range deleted {
		if !strings.HasPrefix(k, remote.ProposalKey(2, "")) {
			t.Errorf("deleted %s", k)
		}
	}
	if _, err := nb.CleanProposals(ctx); err != nil {
		t.Fatal(err)
	}
	// With the group pack gone, the fleet's reader falls back to the
	// increments after one absent GET.
	if stats, keys, gets := catchUp(fleetReader); stats.GroupsMissing != 1 || gets != 3 || len(keys) != 2 || keys[0] == gp.Key {
		t.Fatalf("catch-up after cleanup: %+v, %d GETs, kept %v; want one absent group pack, then the 2 increments", stats, gets, keys)
	}
	// The next publication is ordinary.
	if _, err := seed.publish(ctx, "after.md", nil); err != nil && !errors.Is(err, remote.ErrLostRace) {
		t.Fatal(err)
	}
}

// stuckMemory is a ContentionMemory that always reports contention.
type stuckMemory struct{}

func (stuckMemory) Load() remote.ContentionRecord {
	return remote.ContentionRecord{Contended: time.Now()}
}
func (stuckMemory) Save(remote.ContentionRecord) {}

// A writer in contention registers on its first attempt; when the lead
// marker of its generation is taken by a leader that never writes (it
// died), the writer follows for one follow wait, then leads and writes
// itself: it is not held for follow after follow.
func TestGroupCommitFollowerLeadsWhenTheLeaderIsGone(t *testing.T) {
	ctx := context.Background()
	store := memstore.New()
	w := newGroupWriter(store)
	if _, err := w.publish(ctx, "seed.md", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := store.CreateIfAbsent(ctx, remote.ProposalKey(1, "")+"lead", []byte("gone\n")); err != nil {
		t.Fatal(err)
	}
	var slept time.Duration
	sleep := func(ctx context.Context, d time.Duration) error { slept += d; return ctx.Err() }
	w.nb = remote.Open(store, remote.Options{GroupCommit: true, Sleep: sleep, Contention: stuckMemory{}})
	before := store.Calls(memstore.OpList)
	acc, err := w.publish(ctx, "b.md", nil)
	if err != nil || !acc.Published || acc.Included != 0 || acc.State.Generation() != 2 {
		t.Fatalf("publish: %+v, %v (want its own write at generation 2)", acc, err)
	}
	if store.Calls(memstore.OpList) == before {
		t.Fatal("the first attempt in contention did not register and gather")
	}
	if slept > 10*time.Second {
		t.Fatalf("waited %v before leading: it followed a dead leader again and again", slept)
	}
}

// proposalKeys lists the keys under proposals/: descriptors, lead
// markers and group packs.
func proposalKeys(t *testing.T, mem *memstore.Mem) []string {
	t.Helper()
	objs, err := mem.List(context.Background(), remote.ProposalsPrefix)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range objs {
		keys = append(keys, o.Key)
	}
	return keys
}

// A first attempt registers when `current`'s tail shows a busy fleet
// (publications much closer together than an attempt takes), even for a
// writer with no contention of its own to remember: in a fleet whose
// agents commit once a minute each, a racing first attempt would beat the
// group's leader. A tail that has gone quiet, or one that only shows the
// writer's own commits in a row, leaves it at three requests.
func TestGroupCommitFirstAttemptRegistersOnABusyTail(t *testing.T) {
	ctx := context.Background()
	proposals := func(mem *memstore.Mem) []string { return proposalKeys(t, mem) }
	busy := func(t *testing.T) (*memstore.Mem, func() time.Time) {
		mem := memstore.New()
		clock := tickingClock()
		for i := range 3 { // three writers, a few milliseconds apart
			if _, err := newGroupWriterAt(mem, clock).publish(ctx, fmt.Sprintf("w%d.md", i), nil); err != nil {
				t.Fatal(err)
			}
			// One publication is no rate; two a few milliseconds
			// apart are a busy fleet.
			if keys := proposals(mem); (len(keys) != 0) != (i == 2) {
				t.Fatalf("writer %d: proposals %v", i, keys)
			}
		}
		if _, err := remote.Open(mem, remote.Options{Now: clock}).CleanProposals(ctx); err != nil {
			t.Fatal(err)
		}
		return mem, clock
	}

	t.Run("busy", func(t *testing.T) {
		mem, clock := busy(t)
		acc, err := newGroupWriterAt(mem, clock).publish(ctx, "new.md", nil)
		if err != nil || acc.Attempts != 1 || acc.State.Generation() != 4 {
			t.Fatalf("%+v, %v", acc, err)
		}
		want := []string{remote.ProposalKey(3, "lead"), remote.ProposalKey(3, acc.Publication)}
		if keys := proposals(mem); !slices.Equal(keys, want) && !slices.Equal(keys, []string{want[1], want[0]}) {
			t.Fatalf("proposals %v, want the descriptor and the lead marker on generation 3", keys)
		}
	})
	t.Run("quiet", func(t *testing.T) {
		mem, clock := busy(t)
		later := func() time.Time { return clock().Add(time.Minute) }
		acc, err := newGroupWriterAt(mem, later).publish(ctx, "new.md", nil)
		if err != nil || acc.Attempts != 1 {
			t.Fatalf("%+v, %v", acc, err)
		}
		if keys := proposals(mem); len(keys) != 0 {
			t.Fatalf("a writer a minute after the others registered: %v", keys)
		}
	})
	t.Run("in a row", func(t *testing.T) {
		mem, clock := busy(t)
		w := newGroupWriterAt(mem, clock)
		for i := range 3 {
			if _, err := w.publish(ctx, fmt.Sprintf("row%d.md", i), nil); err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				if _, err := remote.Open(mem, remote.Options{Now: clock}).CleanProposals(ctx); err != nil {
					t.Fatal(err)
				}
				continue // the first met the others' busy tail
			}
			if keys := proposals(mem); len(keys) != 0 {
				t.Fatalf("commit %d in a row registered: %v", i+1, keys)
			}
		}
	})
}

// A writer that holds its machine's turn and loses the race to a writer of
// another machine goes on as group commit: its retry registers its
// proposal in the store under the publication ID of its first attempt, out
// of the turn. Without group commit the same loss is retried as §4's, with
// a new publication ID and nothing registered (the control).
func TestTurnHolderLostRaceGoesOnAsGroupCommit(t *testing.T) {
	for _, group := range []bool{true, false} {
		t.Run(fmt.Sprintf("group commit %v", group), func(t *testing.T) {
			ctx := context.Background()
			mem := memstore.New()
			other := newGroupWriter(mem) // another machine
			if _, err := other.publish(ctx, "seed.md", nil); err != nil {
				t.Fatal(err)
			}
			turns := &mutexTurns{}
			holder := newGroupWriter(mem)
			holder.nb = remote.Open(mem, remote.Options{Sleep: fastSleep, GroupCommit: group, Turns: turns, Now: spacedClock()})
			var pubs []string
			build := func(attempt int) {
				if attempt == 1 { // the other machine's write lands first
					if _, err := other.publish(ctx, "other.md", nil); err != nil {
						t.Fatal(err)
					}
				}
			}
			from := func(ctx context.Context, b func(context.Context, remote.State, string) (remote.Proposal, error), include remote.IncludeFunc) (remote.Accepted, error) {
				return holder.nb.PublishFrom(ctx, remote.State{}, func(ctx context.Context, observed remote.State, pub string) (remote.Proposal, error) {
					pubs = append(pubs, pub)
					return b(ctx, observed, pub)
				}, include)
			}
			acc, err := holder.publishWith(ctx, "mine.md", build, from)
			if err != nil {
				t.Fatal(err)
			}
			descriptors := slices.DeleteFunc(proposalKeys(t, mem), func(k string) bool { // neither a lead marker nor a group pack
				return strings.HasSuffix(k, "-lead") || strings.HasSuffix(k, "-group")
			})
			if len(pubs) != 2 || acc.State.Generation() != 3 || acc.Publication != pubs[1] {
				t.Fatalf("accepted %+v after builds with publications %v; want generation 3, two builds, the second's ID", acc, pubs)
			}
			wantTurns := int64(2) // §4's retry takes the turn again
			if group {
				wantTurns = 1 // group commit's takes none
			}
			if turns.taken.Load() != wantTurns || turns.inside.Load() != 0 {
				t.Fatalf("turns taken %d, held at the end %d; want %d taken, none held", turns.taken.Load(), turns.inside.Load(), wantTurns)
			}
			switch {
			case group && (pubs[0] != pubs[1] || len(descriptors) != 1 || descriptors[0] != remote.ProposalKey(2, pubs[0])):
				t.Fatalf("group commit: publications %v, descriptors %v; want one ID and its descriptor on generation 2", pubs, descriptors)
			case !group && (pubs[0] == pubs[1] || len(descriptors) != 0):
				t.Fatalf("without group commit: publications %v, descriptors %v; want a new ID per attempt, nothing registered", pubs, descriptors)
			}
		})
	}
}

// A writer with turns whose first read finds the fleet busy registers at
// once when `current` is past what its machine kept (other machines
// publish: a plain attempt would race their group's leader), and stays
// with its turn when the busy tail is its own machine's (the kept state
// is `current`); a machine that kept no state yet (a new one) decides by
// the busy tail alone.
func TestTurnHolderJoinsAForeignBusyFleet(t *testing.T) {
	ctx := context.Background()
	proposals := func(mem *memstore.Mem) []string { // descriptors and group packs
		return slices.DeleteFunc(proposalKeys(t, mem), func(k string) bool { return strings.HasSuffix(k, "-lead") })
	}
	for _, tc := range []struct {
		name          string
		foreign, kept bool
	}{{"foreign", true, true}, {"own", false, true}, {"nothing kept", true, false}} {
		foreign := tc.foreign
		t.Run(tc.name, func(t *testing.T) {
			mem := memstore.New()
			clock := tickingClock() // a busy tail whatever the load
			near := &mapNearby{}
			local := newGroupWriter(mem) // this machine's: each keeps its state nearby
			local.nb = remote.Open(mem, remote.Options{Sleep: fastSleep, Turns: &mutexTurns{}, Nearby: near, Now: clock})
			other := newGroupWriter(mem)
			other.nb = remote.Open(mem, remote.Options{Sleep: fastSleep, Now: clock})
			publish := func(w groupWriter, path string) {
				via := func(ctx context.Context, b func(context.Context, remote.State, string) (remote.Proposal, error), _ remote.IncludeFunc) (remote.Accepted, error) {
					return w.nb.PublishNearby(ctx, b, nil)
				}
				if _, err := w.publishWith(ctx, path, nil, via); err != nil {
					t.Fatal(err)
				}
			}
			publish(local, "kept.md")
			for i := range 3 { // a busy tail: three publications milliseconds apart
				w := local
				if foreign {
					w = other
				}
				publish(w, fmt.Sprintf("w%d.md", i))
			}
			// The holder reads `current` (the kept state is not one to
			// guess on), and decides on what it read.
			near.reliable = false
			if !tc.kept {
				near = &mapNearby{}
			}
			holder := newGroupWriter(mem)
			holder.nb = remote.Open(mem, remote.Options{Sleep: fastSleep, GroupCommit: true, Turns: &mutexTurns{}, Nearby: near, Now: clock})
			acc, err := holder.publishWith(ctx, "mine.md", nil, holder.nb.PublishNearby)
			if err != nil || !acc.Published || acc.Attempts != 1 {
				t.Fatalf("%+v, %v", acc, err)
			}
			keys := proposals(mem)
			registers := foreign
			if registers && !slices.Equal(keys, []string{remote.ProposalKey(acc.State.Generation()-1, acc.Publication)}) {
				t.Fatalf("past the kept state, in a busy fleet: proposals %v, want ours registered on generation %d", keys, acc.State.Generation()-1)
			}
			if !registers && len(keys) != 0 {
				t.Fatalf("%s: proposals %v, want none", tc.name, keys)
			}
		})
	}
}
