package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/osfile"
	"github.com/slivingdoc/slivingdoc/remote"
)

// Local turns (remote/turns.go): the writers of one machine that publish
// to one store take turns through one lock file,
//
//	Config.TurnsDir/<hash of the store identity>.lock      the turn
//	                                            .current   the state the last holder published
//	                                            .packs/    the packs the last holders published
//	                                            .offers/   the proposals of the writers waiting
//
// shared by every engine and process of the user whatever its private
// root (the load generator's agents each have their own). A turn is an
// exclusive lock on it (osfile: flock, LockFileEx), which the kernel drops
// when its holder dies, so a crashed writer never wedges the others. It
// only orders attempts: correctness never depends on it. A writer waits
// for its turn while the turns move, however many writers are ahead; when
// no holder has published for turnStall (a holder stopped with SIGSTOP, a
// publication stuck in a slow store) it stops waiting and goes ahead,
// racing as it would without turns. While it waits, a writer offers its
// proposal, built on the kept state, in .offers/; the holder includes
// every offer that merges cleanly in its own conditional write
// (remote/offers.go), so one turn accepts many commits.
type localTurns struct {
	path        string
	current     string // the state the last holder published (remote.Nearby): <dir>/<store>.current
	packs       string // the packs published lately (remote.Nearby): <dir>/<store>.packs/<base name of the key>
	offers      string // the proposals of writers waiting for a turn (remote.Offers): <dir>/<store>.offers/<G>-<publication>
	stall, poll time.Duration

	mu sync.Mutex
	// pending is a wait for the lock that ended without the turn (its
	// writer was accepted as an offer, its context ended, or the turns
	// stalled) and is still blocked on the lock: the next Take waits on
	// it instead of blocking a second thread; granted with nobody
	// waiting, the turn is given back at once. After a stall Take only
	// tries the lock until it is granted: a holder stopped for good must
	// not hold every later call of a long-lived engine for turnStall.
	pending *acquisition
	stalled bool
}

// hasPending reports whether an abandoned wait is still blocked.
func (t *localTurns) hasPending() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.pending != nil
}

// acquisition is one thread blocked on the lock file.
type acquisition struct{ got chan *osfile.Lock }

// nearbyKeep is how many packs the nearby directory keeps: more than a
// writer falls behind between two of its turns in a busy fleet of one
// machine. It is trimmed on about one write in nearbyTrimEvery.
// Packs over nearbyMaxPack (a first commit of a large tree) are not kept:
// they are rare, and the directory stays small.
const (
	nearbyKeep      = 256
	nearbyTrimEvery = 32
	nearbyMaxPack   = 1 << 20
)

// A writer waits for its turn as long as the turns move, and gives up
// when no holder has published for turnStall (checked every turnPoll): a
// turn lasts one attempt, a few milliseconds to a few tens under load.
// A writer that offers its proposal while it waits (remote/offers.go)
// must see the kept state move at once (a turn lasts some 20-100 ms on
// SeaweedFS, and an offer built late misses the holder's gather): it
// watches the directory (kept_watch_linux.go), or polls every offerPoll
// where it cannot.
const (
	turnStall = 5 * time.Second
	turnPoll  = 100 * time.Millisecond
	offerPoll = 5 * time.Millisecond
)

// newLocalTurns returns the turnstile of store's writers in dir, or nil
// (no turns) when dir is empty or cannot be made.
func newLocalTurns(dir, storeKey string) *localTurns {
	packs, offers := filepath.Join(dir, storeKey+".packs"), filepath.Join(dir, storeKey+".offers")
	if dir == "" || os.MkdirAll(packs, 0o700) != nil || os.MkdirAll(offers, 0o700) != nil {
		return nil
	}
	return &localTurns{path: filepath.Join(dir, storeKey+".lock"), current: filepath.Join(dir, storeKey+".current"), packs: packs, offers: offers, stall: turnStall, poll: turnPoll}
}

// options sets the remote.Options fields of t (none when t is nil),
// Offers only with offers.
func (t *localTurns) options(opts *remote.Options, offers bool) {
	if t != nil {
		opts.Turns, opts.Nearby = t, t
		if offers {
			opts.Offers = t
		}
	}
}

func (t *localTurns) Take(ctx context.Context, waiting func() bool) (func(), bool) {
	// A free turn (a writer alone) is taken at once, without the waiter
	// below; behind a stalled holder, only this try.
	if l, err := osfile.TryAcquire(t.path, 0o600); err == nil {
		return release(l), true
	} else if !errors.Is(err, osfile.ErrLocked) {
		return func() {}, false
	}
	t.mu.Lock()
	a := t.pending
	if a != nil && t.stalled {
		t.mu.Unlock()
		return func() {}, false
	}
	t.pending = nil // waited on by this call
	if a == nil {
		a = t.acquire()
	}
	t.mu.Unlock()
	every := t.poll
	var watched <-chan struct{}
	if waiting != nil {
		var stop func()
		watched, stop = watchKept(t.current)
		defer stop()
		if watched == nil {
			every = min(every, offerPoll)
		}
	}
	poll := time.NewTicker(every)
	defer poll.Stop()
	last, _ := os.Stat(t.current)
	moved := time.Now()
	stalled := false
	if waiting != nil && waiting() {
		return t.abandon(a, false), false
	}
	for {
		select {
		case l := <-a.got:
			if l == nil {
				return func() {}, false
			}
			return release(l), true
		case <-ctx.Done():
			return t.abandon(a, false), false
		case <-watched:
			if now, _ := os.Stat(t.current); !sameFile(last, now) {
				last, moved = now, time.Now()
				if waiting() {
					return t.abandon(a, false), false
				}
			}
		case <-poll.C:
			// Turns move while the holders publish: each replaces
			// the kept state. A queue of any length is waited for;
			// a holder that publishes nothing for turnStall is not.
			now, _ := os.Stat(t.current)
			switch {
			case !sameFile(last, now):
				last, moved = now, time.Now()
				if waiting != nil && waiting() {
					return t.abandon(a, false), false
				}
			case time.Since(moved) >= t.stall:
				stalled = true
			}
		}
		if stalled {
			return t.abandon(a, true), false
		}
	}
}

// acquire starts a thread blocked on the lock file. Granted, the lock
// goes to the Take waiting on it, or back at once when none does (the
// acquisition is pending); t.mu is held.
func (t *localTurns) acquire() *acquisition {
	a := &acquisition{got: make(chan *osfile.Lock, 1)}
	go func() {
		l, err := osfile.Acquire(t.path, 0o600)
		if err != nil {
			l = nil
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.pending == a { // nobody waits for it
			t.pending, t.stalled = nil, false
			_ = l.Release()
			return
		}
		a.got <- l
	}()
	return a
}

// abandon ends a wait without the turn: a lock granted meanwhile is given
// back, otherwise the acquisition is left pending for the next Take.
func (t *localTurns) abandon(a *acquisition, stalled bool) func() {
	t.mu.Lock()
	defer t.mu.Unlock()
	select {
	case l := <-a.got:
		_ = l.Release()
	default:
		t.pending, t.stalled = a, stalled
	}
	return func() {}
}

// sameFile reports whether two stats of the kept state show the same
// file (each KeepCurrent renames a new one into place).
func sameFile(a, b os.FileInfo) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return os.SameFile(a, b) && a.ModTime().Equal(b.ModTime()) && a.Size() == b.Size()
}

func release(l *osfile.Lock) func() {
	var done atomic.Bool
	return func() {
		if done.CompareAndSwap(false, true) {
			_ = l.Release()
		}
	}
}

// Pack returns the pack a neighbour kept under key (remote checks it).
func (t *localTurns) Pack(key string) []byte {
	data, err := os.ReadFile(filepath.Join(t.packs, path.Base(key)))
	if err != nil {
		return nil
	}
	return data
}

// KeepPack writes data for the writers whose turns come next: renamed
// into place, so a reader sees all of it or nothing; not synced, since a
// file lost in a crash only means a store read.
func (t *localTurns) KeepPack(key string, data []byte) {
	if len(data) > nearbyMaxPack || osfile.WriteFile(filepath.Join(t.packs, path.Base(key)), 0o600, false, data) != nil {
		return
	}
	if rand.IntN(nearbyTrimEvery) == 0 {
		t.trim()
	}
}

// trim removes all but the nearbyKeep newest packs (increment keys sort
// by generation: packs/increments/<20 digits>-<id>.pack).
func (t *localTurns) trim() {
	names, err := os.ReadDir(t.packs)
	if err != nil || len(names) <= nearbyKeep {
		return
	}
	for _, d := range names[:len(names)-nearbyKeep] { // ReadDir sorts by name
		_ = os.Remove(filepath.Join(t.packs, d.Name()))
	}
}

// Current returns the state the last holder kept: "reliable" or
// "unreliable" on the first line, its ETag on the second, then `current`'s
// bytes (remote decodes them strictly).
func (t *localTurns) Current() ([]byte, string, bool) {
	data, err := os.ReadFile(t.current)
	if err != nil {
		return nil, "", false
	}
	mark, rest, _ := bytes.Cut(data, []byte("\n"))
	etag, manifest, ok := bytes.Cut(rest, []byte("\n"))
	if !ok || len(etag) == 0 || string(mark) != "reliable" && string(mark) != "unreliable" {
		return nil, "", false
	}
	return manifest, string(etag), string(mark) == "reliable"
}

// KeepCurrent replaces the kept state (renamed into place, not synced: a
// state lost or stale only makes the next writer's guess wrong).
func (t *localTurns) KeepCurrent(data []byte, etag string, reliable bool) {
	if etag == "" || strings.ContainsRune(etag, '\n') {
		return
	}
	mark := "unreliable\n"
	if reliable {
		mark = "reliable\n"
	}
	_ = osfile.WriteFile(t.current, 0o600, false, []byte(mark+etag+"\n"), data)
}

// Offer writes the proposal of a writer waiting for its turn where the
// holder gathers it (remote encodes it: its descriptor and its pack).
// Renamed into place, so a holder reads all of it or nothing; not
// synced: an offer lost in a crash is only not included.
func (t *localTurns) Offer(parentGeneration uint64, publication string, data []byte) error {
	return osfile.WriteFile(t.offerPath(parentGeneration, publication), 0o600, false, data)
}

// Offered returns the offers on parentGeneration, oldest first, and how
// many writers wait with offers to make; it removes the offers on older
// generations (only a write conditional on an offer's own generation may
// include it, and `current` is past it) and the marks of waiting writers
// silent for waitingStale (a writer that died).
func (t *localTurns) Offered(parentGeneration uint64) (offers [][]byte, waiting int) {
	names, err := os.ReadDir(t.offers)
	if err != nil {
		return nil, 0
	}
	prefix := offerPrefix(parentGeneration)
	for _, d := range names { // sorted by name: by generation, then by UUIDv7
		name := d.Name()
		switch {
		case strings.HasPrefix(name, prefix):
			if data, err := os.ReadFile(filepath.Join(t.offers, name)); err == nil {
				offers = append(offers, data)
			}
		case strings.HasPrefix(name, waitingPrefix):
			if info, err := d.Info(); err == nil && time.Since(info.ModTime()) > waitingStale {
				_ = os.Remove(filepath.Join(t.offers, name))
			} else {
				waiting++
			}
		case name < prefix && !strings.HasPrefix(name, "."): // a temporary file is its writer's
			_ = os.Remove(filepath.Join(t.offers, name))
		}
	}
	return offers, waiting
}

// Waiting marks (or unmarks) publication's writer as one that waits for a
// turn and offers on each new kept state: a holder waits for its offer.
// The mark is an empty file, w-<publication>, touched on each call.
func (t *localTurns) Waiting(publication string, waiting bool) {
	p := filepath.Join(t.offers, waitingPrefix+publication)
	if !waiting {
		_ = os.Remove(p)
		return
	}
	if f, err := os.Create(p); err == nil {
		_ = f.Close()
	}
}

// A waiting writer's mark starts with waitingPrefix; one untouched for
// waitingStale is a dead writer's (a writer waits at most some seconds).
const (
	waitingPrefix = "w-"
	waitingStale  = time.Minute
)

// Withdraw removes an offer (its writer's call is over, or it offers on
// a later generation).
func (t *localTurns) Withdraw(parentGeneration uint64, publication string) {
	_ = os.Remove(t.offerPath(parentGeneration, publication))
}

func (t *localTurns) offerPath(parentGeneration uint64, publication string) string {
	return filepath.Join(t.offers, offerPrefix(parentGeneration)+publication)
}

func offerPrefix(parentGeneration uint64) string {
	return fmt.Sprintf("%020d-", parentGeneration)
}
