package server

import (
	"context"
	"errors"
	"fmt"
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
	"github.com/slivingdoc/slivingdoc/server/diag"
)

// errChaosKilled is what the chaos store returns after applying a request whose
// caller it "kills": the caller learns nothing, as if its process had died
// right after the store applied the request.
var errChaosKilled = fmt.Errorf("chaos: the caller died here: %w", remote.ErrUnavailable)

// chaosStore wraps a Mem with a seeded schedule: random latency on every
// request (so writers interleave differently per seed), and faults: a
// writer killed after its conditional write (applied, error returned), a
// lost reply (applied, ambiguous), a late request (ambiguous, applied only
// when the next write of `current` arrives, as a server frozen past the
// client's timeout does after the writer re-read `current`: memstore's
// Late fault), failed reads of packs, and failed pack uploads (the writer
// publishes nothing).
type chaosStore struct {
	*memstore.Mem
	mu  sync.Mutex
	rnd *rand.Rand
	on  bool // faults and latency only while the writers run
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
	if strings.HasPrefix(key, remote.IncrementsPrefix) && c.roll() < 0.03 {
		return nil, "", fmt.Errorf("chaos: read failed: %w", remote.ErrUnavailable)
	}
	return c.Mem.Get(ctx, key)
}

func (c *chaosStore) Put(ctx context.Context, key string, data []byte) error {
	c.pause()
	if strings.HasPrefix(key, remote.IncrementsPrefix) && c.roll() < 0.02 {
		return fmt.Errorf("chaos: upload failed: %w", remote.ErrUnavailable)
	}
	return c.Mem.Put(ctx, key, data)
}

func (c *chaosStore) CreateIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	c.pause()
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

// The model test: many random schedules of writers committing at once,
// each commit's publication racing the others', with faults interleaved
// (chaosStore). Every commit reported OK has its change in the final
// notebook exactly once; a commit that failed has it at most once; no
// publication ID is accepted twice; generations are contiguous and each
// increment's parent is the previous head; the shared file's slot of a
// writer never loses an update it was told was published; and every
// writer, after its next call, holds the accepted tree (the recovery of a
// publication accepted while its writer was "dead"). PUBLICATION_SCHEDULES
// raises the number of schedules (default 40; -short 8),
// PUBLICATION_SEED runs them from that seed on (to replay one: the
// schedule's interleaving also depends on the machine, through its real
// latencies, so a failing seed is replayed under the same conditions
// rather than step by step).
func TestPublicationModel(t *testing.T) {
	schedules := 40
	if testing.Short() {
		schedules = 8
	}
	if v, err := strconv.Atoi(os.Getenv("PUBLICATION_SCHEDULES")); err == nil && v > 0 {
		schedules = v
	}
	first := 0
	if v, err := strconv.Atoi(os.Getenv("PUBLICATION_SEED")); err == nil && v >= 0 {
		first = v
	}
	// Each schedule is a parallel subtest: most of a schedule's time is
	// its writers' backoff, so -parallel N runs N at once.
	var accepted atomic.Int64
	t.Run("schedules", func(t *testing.T) {
		for seed := first; seed < first+schedules; seed++ {
			t.Run(strconv.Itoa(seed), func(t *testing.T) {
				t.Parallel()
				r := runSchedule(t, uint64(seed))
				accepted.Add(int64(r.accepted))
			})
		}
	})
	t.Logf("%d schedules: %d increments accepted", schedules, accepted.Load())
}

// verifyAfterSchedule runs remote.Verify on a schedule's store: every
// finding fails the schedule.
func verifyAfterSchedule(t *testing.T, seed uint64, store remote.Store) {
	t.Helper()
	rep, err := remote.Verify(context.Background(), store, remote.VerifyOptions{})
	if err != nil {
		t.Errorf("seed %d: verify: %v", seed, err)
		return
	}
	for _, f := range rep.Findings {
		t.Errorf("seed %d: verify: %+v", seed, f)
	}
}

// scheduleResult counts what one schedule exercised.
type scheduleResult struct {
	accepted int
}

func runSchedule(t *testing.T, seed uint64) (res scheduleResult) {
	rnd := rand.New(rand.NewPCG(seed, 18))
	store := &chaosStore{Mem: memstore.New(), rnd: rand.New(rand.NewPCG(seed, 81))}
	writers := 3 + rnd.IntN(6)
	commits := 1 + rnd.IntN(3)
	agents := make([]*agent, writers)
	for i := range agents {
		agents[i] = newAgent(t, store, func(c *Config) { c.CheckpointPacks = 100000 })
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
				// merged three-way (the slots apart) by its retry after
				// a race lost to another writer of it.
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
				var de *diag.Error
				if err != nil && !(errors.As(err, &de) && (de.Code == diag.CodeStorageFailure || de.Code == diag.CodeRecoveryFailure || de.Code == diag.CodeRemoteBusy)) {
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

	// A fresh reader's tree is the accepted one; every writer pulls
	// (recovering whatever was interrupted) and then holds it, apart from
	// its own unpublished changes (a commit that failed without being
	// accepted leaves them in L).
	verifyAfterSchedule(t, seed, store.Mem)
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
	return res
}
