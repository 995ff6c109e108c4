package server

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

func withGroupCommit() agentOpt { return func(c *Config) { c.GroupCommit = true } }

// With group commit on, an uncontended commit is still three requests
// (DESIGN §5): only a retry registers, lists and includes.
func TestGroupCommitUncontendedThreeRequests(t *testing.T) {
	store := memstore.New()
	a := newAgent(t, store, withGroupCommit())
	a.pull()
	a.write("a.md", "one\n")
	a.commit("seed")
	ops := []memstore.Op{memstore.OpGet, memstore.OpHead, memstore.OpCreate, memstore.OpReplace, memstore.OpPut, memstore.OpDelete, memstore.OpList}
	before := map[memstore.Op]int{}
	for _, op := range ops {
		before[op] = store.Calls(op)
	}
	a.appendTo("a.md", "two\n")
	a.commit("append")
	got := map[memstore.Op]int{}
	for _, op := range ops {
		if d := store.Calls(op) - before[op]; d != 0 {
			got[op] = d
		}
	}
	want := map[memstore.Op]int{memstore.OpGet: 1, memstore.OpPut: 1, memstore.OpReplace: 1}
	if !maps.Equal(got, want) {
		t.Fatalf("requests %v, want %v", got, want)
	}
}

// errChaosKilled is what the chaos store returns after applying a request whose
// caller it "kills": the caller learns nothing, as if its process had died
// right after the store applied the request.
var errChaosKilled = fmt.Errorf("chaos: the caller died here: %w", remote.ErrUnavailable)

// chaosStore wraps a Mem with a seeded schedule: random latency on every
// request (so writers interleave differently per seed), and faults:
// a proposer killed after registering (descriptor stored, error returned),
// a writer (often a helper) killed after its conditional write (applied,
// error returned), a lost reply (applied, ambiguous), a late request
// (ambiguous, applied only when the next write of `current` arrives, as a
// server frozen past the client's timeout does after the writer re-read
// `current`: memstore's Late fault), failed reads of proposals and packs
// (a helper that cannot read a proposal leaves it out), and failed pack
// uploads: a writer's own (it publishes nothing) and a
// member's create (that member and the ones after it stay out, while the
// segments of their folds may already be up).
type chaosStore struct {
	*memstore.Mem
	mu  sync.Mutex
	rnd *rand.Rand
	on  bool // faults and latency only while the writers run
	// registered counts the proposal descriptors written (a writer that
	// registered with the store, §4B).
	registered atomic.Int64
}

func (c *chaosStore) roll() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.on {
		return 1
	}
	return c.rnd.Float64()
}

func (c *chaosStore) set(on bool) {
	c.mu.Lock()
	c.on = on
	c.mu.Unlock()
}

func (c *chaosStore) pause() {
	if r := c.roll(); r < 1 {
		d := time.Duration(r * float64(2*time.Millisecond))
		time.Sleep(d)
	}
}

func (c *chaosStore) Get(ctx context.Context, key string) ([]byte, string, error) {
	c.pause()
	if (strings.HasPrefix(key, remote.ProposalsPrefix) || strings.HasPrefix(key, remote.IncrementsPrefix)) && c.roll() < 0.03 {
		return nil, "", fmt.Errorf("chaos: read failed: %w", remote.ErrUnavailable)
	}
	return c.Mem.Get(ctx, key)
}

func (c *chaosStore) Put(ctx context.Context, key string, data []byte) error {
	c.pause()
	if strings.HasPrefix(key, remote.IncrementsPrefix) && c.roll() < 0.02 {
		return fmt.Errorf("chaos: upload failed: %w", remote.ErrUnavailable)
	}
	err := c.Mem.Put(ctx, key, data)
	if err == nil && strings.HasPrefix(key, remote.ProposalsPrefix) && !strings.HasSuffix(key, "-group") {
		c.registered.Add(1)
	}
	if err == nil && strings.HasPrefix(key, remote.ProposalsPrefix) && c.roll() < 0.05 {
		return errChaosKilled
	}
	return err
}

func (c *chaosStore) CreateIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	c.pause()
	if strings.HasPrefix(key, remote.IncrementsPrefix) && c.roll() < 0.04 {
		return "", fmt.Errorf("chaos: create failed: %w", remote.ErrUnavailable)
	}
	return c.Mem.CreateIfAbsent(ctx, key, data)
}

func (c *chaosStore) ReplaceIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	c.pause()
	if key == remote.CurrentKey && c.roll() < 0.04 {
		// Held for the next write of `current` (whichever writer's
		// request takes the fault).
		c.Mem.Inject(memstore.Fault{Op: memstore.OpReplace, KeyPrefix: remote.CurrentKey, Late: true})
	}
	tag, err := c.Mem.ReplaceIfMatch(ctx, key, data, etag)
	if err == nil && key == remote.CurrentKey {
		switch r := c.roll(); {
		case r < 0.04:
			return "", errChaosKilled
		case r < 0.08:
			return "", fmt.Errorf("chaos: reply lost: %w", remote.ErrAmbiguous)
		}
	}
	return tag, err
}

func (c *chaosStore) List(ctx context.Context, prefix string) ([]remote.ObjectInfo, error) {
	c.pause()
	return c.Mem.List(ctx, prefix)
}

// The model test (issue 18): many random schedules of writers committing
// at once with group commit on, helpers and faults interleaved. Every
// commit reported OK has its change in the final notebook exactly once;
// a commit that failed has it at most once; no publication ID is accepted
// twice; generations are contiguous and each increment's parent is the
// previous head; and every writer, after its next call, holds the
// accepted tree (the DESIGN §6 recovery of a proposal accepted while its
// proposer was "dead"). GROUPCOMMIT_SCHEDULES raises the number of
// schedules (default 40; -short 8).
func TestGroupCommitModel(t *testing.T) {
	testScheduleModel(t, modeGroupCommit)
}

// The same model with the writers on one or two "machines" (a turns
// directory each) instead of group commit: writers waiting for their turn
// offer their proposals to its holder (remote/offers.go), with the same
// faults (a holder killed after its conditional write, a lost reply) and
// the same checks.
func TestOffersModel(t *testing.T) {
	testScheduleModel(t, modeOffers)
}

// The same model with both, as a fleet of several machines runs by
// default: the writers of each of two "machines" take turns and offer,
// and a holder that meets the other machine (a lost race, or its busy
// tail past the kept state) goes on as group commit (remote.PublishFrom).
// The model must see such a holder register.
func TestTurnsGroupCommitModel(t *testing.T) {
	testScheduleModel(t, modeTurnsGroupCommit)
}

// How the writers of a schedule cooperate.
type scheduleMode int

const (
	modeGroupCommit      scheduleMode = iota // Config.GroupCommit, proposals in the store
	modeOffers                               // local turns with offers (Config.TurnsDir)
	modeTurnsGroupCommit                     // both: two machines' turns, group commit between them
)

func testScheduleModel(t *testing.T, mode scheduleMode) {
	schedules := 40
	if testing.Short() {
		schedules = 8
	}
	if v, err := strconv.Atoi(os.Getenv("GROUPCOMMIT_SCHEDULES")); err == nil && v > 0 {
		schedules = v
	}
	first := 0 // GROUPCOMMIT_SEED runs schedules from that seed on (to replay one)
	if v, err := strconv.Atoi(os.Getenv("GROUPCOMMIT_SEED")); err == nil && v >= 0 {
		first = v
	}
	// Each schedule is a parallel subtest: most of a schedule's time is
	// its writers' backoff, so -parallel N runs N at once.
	var grouped, writes, accepted, merged, registered atomic.Int64
	t.Run("schedules", func(t *testing.T) {
		for seed := first; seed < first+schedules; seed++ {
			t.Run(strconv.Itoa(seed), func(t *testing.T) {
				t.Parallel()
				r := runGroupSchedule(t, uint64(seed), mode)
				grouped.Add(int64(r.grouped))
				writes.Add(int64(r.writes))
				accepted.Add(int64(r.accepted))
				merged.Add(int64(r.merged))
				registered.Add(int64(r.registered))
			})
		}
	})
	t.Logf("%d schedules: %d increments accepted; %d won writes of a writer that had registered or offered included %d members, %d of them merged into a file the group changed too; %d proposals registered in the store",
		schedules, accepted.Load(), writes.Load(), grouped.Load(), merged.Load(), registered.Load())
	if t.Failed() {
		return
	}
	if grouped.Load() == 0 {
		t.Fatalf("no schedule accepted a proposal as a group member: the model exercised nothing")
	}
	if mode == modeTurnsGroupCommit && registered.Load() == 0 {
		t.Fatalf("no turn holder registered its proposal after a race lost to the other machine: the composition was not exercised")
	}
	if mode == modeOffers && registered.Load() != 0 {
		t.Fatalf("%d proposals registered without group commit", registered.Load())
	}
	if schedules >= 20 && merged.Load() == 0 {
		t.Fatalf("no member was merged into a file the group changed: the three-way inclusion was not exercised")
	}
}

// verifyAfterSchedule runs remote.Verify on a schedule's store. A group
// write that failed (its own pack's upload, or a lost race) leaves the
// packs of its members, created before its conditional write, at the
// generations after its own, and verify cannot tell those from a
// `current` restored from an older copy (docs/operations.md §3B): here,
// where nothing was restored, a GENERATION_REGRESSED finding on an
// increment pack or segment within a group's reach of `current` is such
// a leftover.
// Every other finding fails the schedule.
func verifyAfterSchedule(t *testing.T, seed uint64, store remote.Store, gen uint64) {
	t.Helper()
	rep, err := remote.Verify(context.Background(), store, remote.VerifyOptions{})
	if err != nil {
		t.Errorf("seed %d: verify: %v", seed, err)
		return
	}
	for _, f := range rep.Findings {
		if f.Code == remote.FindingGenerationRegress && leftOfGroup(f.Key, gen) {
			continue
		}
		t.Errorf("seed %d: verify: %+v", seed, f)
	}
}

// leftOfGroup reports whether key is an increment pack, or a segment of
// a fold, that a failed group write on generation gen could have left.
func leftOfGroup(key string, gen uint64) bool {
	var g uint64
	switch {
	case strings.HasPrefix(key, remote.IncrementsPrefix):
		_, pg, _, err := remote.ParsePackKey(key)
		if err != nil {
			return false
		}
		g = pg
	case strings.HasPrefix(key, remote.SegmentsPrefix):
		_, _, last, _, err := remote.ParseSegmentKey(key)
		if err != nil {
			return false
		}
		g = last
	default:
		return false
	}
	return g <= gen+1+remote.DefaultMaxGroup
}

// scheduleResult counts what one schedule exercised.
type scheduleResult struct {
	grouped, writes, accepted, merged int
	registered                        int // proposal descriptors written to the store
}

func runGroupSchedule(t *testing.T, seed uint64, mode scheduleMode) (res scheduleResult) {
	rnd := rand.New(rand.NewPCG(seed, 18))
	store := &chaosStore{Mem: memstore.New(), rnd: rand.New(rand.NewPCG(seed, 81))}
	writers := 3 + rnd.IntN(6)
	commits := 1 + rnd.IntN(3)
	agents := make([]*agent, writers)
	machines := []string{t.TempDir(), t.TempDir()}[:1+rnd.IntN(2)]
	if mode == modeTurnsGroupCommit {
		machines = []string{t.TempDir(), t.TempDir()} // races between them
	}
	for i := range agents {
		coop := withGroupCommit()
		switch mode {
		case modeOffers:
			coop = func(c *Config) { c.TurnsDir = machines[i%len(machines)] }
		case modeTurnsGroupCommit:
			coop = func(c *Config) { c.TurnsDir, c.GroupCommit = machines[i%len(machines)], true }
		}
		agents[i] = newAgent(t, store, coop, withRetries(20), func(c *Config) { c.CheckpointPacks = 100000 })
	}
	seedAgent := agents[0]
	seedAgent.pull()
	seedAgent.write("README.md", "model\n")
	var shared strings.Builder
	for i := range writers {
		fmt.Fprintf(&shared, "slot %d\n\n\n\n", i)
	}
	seedAgent.write("shared.md", shared.String())
	seedAgent.commit("seed")
	for _, a := range agents {
		a.pull()
	}
	type outcome struct {
		line string
		ok   bool
		slot bool // it edited the writer's slot of shared.md
	}
	results := make([][]outcome, writers)
	var wg sync.WaitGroup
	var errMu sync.Mutex
	var unexpected []error
	start := make(chan struct{})
	for i, a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for j := range commits {
				line := fmt.Sprintf("w%d-c%d", i, j)
				own := filepath.Join(a.dir, fmt.Sprintf("w%d.md", i))
				old, _ := os.ReadFile(own)
				if err := os.WriteFile(own, append(old, line+"\n"...), 0o644); err != nil {
					panic(err)
				}
				if err := os.WriteFile(filepath.Join(a.dir, "c-"+line+".md"), []byte(line+"\n"), 0o644); err != nil {
					panic(err)
				}
				// A third of the commits also edit the writer's own
				// slot of one shared file: the same path as others,
				// merged into a group that touched it (three-way, the
				// slots apart) or by its own retry.
				if (i+j)%3 != 0 {
					goto commit
				}
				{
					sp := filepath.Join(a.dir, "shared.md")
					sb, _ := os.ReadFile(sp)
					lines := strings.Split(string(sb), "\n")
					for k, l := range lines {
						if l == fmt.Sprintf("slot %d", i) || strings.HasPrefix(l, fmt.Sprintf("slot %d: ", i)) {
							lines[k] = fmt.Sprintf("slot %d: %s", i, line)
						}
					}
					if err := os.WriteFile(sp, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
						panic(err)
					}
				}
			commit:
				_, err := a.e.Commit(context.Background(), "", "commit "+line)
				results[i] = append(results[i], outcome{line: line, ok: err == nil, slot: (i+j)%3 == 0})
				var de *Error
				if err != nil && !(errors.As(err, &de) && (de.Code == CodeStorageFailure || de.Code == CodeRecoveryFailure || de.Code == CodeRemoteBusy)) {
					errMu.Lock()
					unexpected = append(unexpected, fmt.Errorf("writer %d commit %d: %w", i, j, err))
					errMu.Unlock()
				}
			}
		}()
	}
	store.set(true)
	close(start)
	wg.Wait()
	store.set(false)
	for _, err := range unexpected {
		t.Errorf("seed %d: unexpected error: %v", seed, err)
	}

	// The history: contiguous generations, a chain of heads, unique IDs.
	nb := remote.Open(store.Mem, remote.Options{})
	ctx := context.Background()
	state, err := nb.ReadCurrent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	incs, err := nb.Publications(ctx, state, 1, state.Generation())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i, inc := range incs {
		if inc.Generation != uint64(i+1) {
			t.Errorf("seed %d: increment %d has generation %d: not contiguous", seed, i, inc.Generation)
		}
		if i > 0 && inc.Parent != incs[i-1].Head {
			t.Errorf("seed %d: generation %d's parent is not generation %d's head", seed, inc.Generation, incs[i-1].Generation)
		}
		if seen[inc.Publication] {
			t.Errorf("seed %d: publication %s accepted twice", seed, inc.Publication)
		}
		seen[inc.Publication] = true
	}
	if uint64(len(incs)) != state.Generation() {
		t.Errorf("seed %d: %d increments for generation %d", seed, len(incs), state.Generation())
	}
	res.accepted = len(incs)
	for _, a := range agents {
		w, _ := a.e.notebook.GroupStats()
		res.writes += int(w)
	}

	// A fresh reader's tree is the accepted one; every writer pulls
	// (recovering whatever was interrupted) and then holds it, apart from
	// its own unpublished changes (a commit that failed without being
	// accepted leaves them in L).
	verifyAfterSchedule(t, seed, store.Mem, state.Generation())
	reader := newAgent(t, store.Mem)
	reader.pull()
	want := reader.files()
	for i, a := range agents {
		if _, err := a.e.Pull(ctx, ""); err != nil {
			t.Fatalf("seed %d: writer %d: pull: %v", seed, i, err)
		}
		files := a.files()
		own := func(p string) bool {
			return p == fmt.Sprintf("w%d.md", i) || strings.HasPrefix(p, fmt.Sprintf("c-w%d-", i)) || p == "shared.md"
		}
		for p, c := range want {
			if !own(p) && files[p] != c {
				t.Errorf("seed %d: writer %d: %s differs from the accepted tree after pull", seed, i, p)
			}
		}
		for p, c := range files {
			if strings.Contains(c, "<<<<<<<") {
				t.Errorf("seed %d: writer %d: %s holds a conflict block", seed, i, p)
			}
			if _, ok := want[p]; !ok && !own(p) {
				t.Errorf("seed %d: writer %d: %s is not in the accepted tree", seed, i, p)
			}
		}
	}
	for i, rs := range results {
		// The shared slot holds the writer's last OK commit or a later
		// one that was accepted: never an older value (a lost update).
		lastOK := -1
		for j, r := range rs {
			if r.ok && r.slot {
				lastOK = j
			}
		}
		slot := ""
		for _, l := range strings.Split(want["shared.md"], "\n") {
			if l == fmt.Sprintf("slot %d", i) || strings.HasPrefix(l, fmt.Sprintf("slot %d: ", i)) {
				slot = l
			}
		}
		if lastOK >= 0 {
			fine := false
			for _, r := range rs[lastOK:] {
				if r.slot && slot == fmt.Sprintf("slot %d: %s", i, r.line) {
					if _, present := want["c-"+r.line+".md"]; present {
						fine = true
					}
				}
			}
			if !fine {
				t.Errorf("seed %d: writer %d's shared slot is %q after its OK commit %s", seed, i, slot, rs[lastOK].line)
			}
		}
		body := want[fmt.Sprintf("w%d.md", i)]
		for _, r := range rs {
			n := strings.Count(body, r.line+"\n")
			_, file := want["c-"+r.line+".md"]
			switch {
			case r.ok && (n != 1 || !file):
				t.Errorf("seed %d: OK commit %s present %d times (file %t)", seed, r.line, n, file)
			case n > 1:
				t.Errorf("seed %d: failed commit %s present %d times", seed, r.line, n)
			case (n == 1) != file && r.ok:
				t.Errorf("seed %d: commit %s half present", seed, r.line)
			}
		}
	}
	for _, a := range agents {
		_, members := a.e.notebook.GroupStats()
		res.grouped += int(members)
		res.merged += int(a.e.groupMerged.Load())
	}
	res.registered = int(store.registered.Load())
	return res
}
