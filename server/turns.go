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
)

// Local turns (remote/turns.go): the writers of one machine that publish
// to one store take turns through one lock file,
//
//	Config.TurnsDir/<hash of the store identity>.lock      the turn
//	                                            .turn      locked by the holder while its turn lasts
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
//
// A waiting writer learns at once that a turn ended, with no CPU spent
// meanwhile: the holder keeps an exclusive lock on .turn from the moment
// it has the turn until it has kept its state, and each waiting writer
// waits for a shared lock on it, which the kernel grants to all of them
// when the holder lets go. (An inotify watch did this before; it needs an
// instance per process, and past the per-user limit, 128 by default, the
// writers of a 100-agent burst fell back to polling every 5 ms: three
// quarters of their CPU went to waking up.)
type localTurns struct {
	path        string
	turn        string // locked exclusively while a turn lasts: <dir>/<store>.turn
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
type acquisition struct{ got chan *hold }

// hold is a turn had: the lock on the turn and the exclusive lock on
// .turn (nil when it could not be had: the waiting writers then learn of
// the turn's end by polling).
type hold struct{ lock, turn *osfile.Lock }

// holdTurn takes .turn for the turn l was granted. The shared locks it
// may wait for are held for an instant each (watchTurnEnds).
func (t *localTurns) holdTurn(l *osfile.Lock) *hold {
	h := &hold{lock: l}
	if tl, err := osfile.AcquireExisting(t.turn); err == nil {
		h.turn = tl
	}
	return h
}

// release ends the turn: .turn first, so the waiting writers go on to the
// kept state while the next holder gets the lock.
func (h *hold) release() {
	_ = h.turn.Release()
	_ = h.lock.Release()
}

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
// waits for the end of each turn (watchTurnEnds), and polls every
// offerPoll while no holder has .turn (between two turns, or a holder
// that could not lock it).
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
	t := &localTurns{path: filepath.Join(dir, storeKey+".lock"), turn: filepath.Join(dir, storeKey+".turn"), current: filepath.Join(dir, storeKey+".current"), packs: packs, offers: offers, stall: turnStall, poll: turnPoll}
	// .turn exists from here on: the threads that lock it later (some
	// after their Take has returned, even after the engine closed) only
	// open it, so a late one cannot bring it back into a directory that
	// was removed meanwhile (a test's, or a cleaned cache: then the
	// waiters poll, as behind a holder that could not lock it).
	if f, err := os.OpenFile(t.turn, os.O_RDONLY|os.O_CREATE, 0o600); err == nil {
		_ = f.Close()
	}
	return t
}

func (t *localTurns) Take(ctx context.Context, waiting func() bool) (func(), bool) {
	// A free turn (a writer alone) is taken at once, without the waiter
	// below; behind a stalled holder, only this try.
	if l, err := osfile.TryAcquire(t.path, 0o600); err == nil {
		return once(t.holdTurn(l)), true
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
	var ends <-chan struct{}
	var again chan<- time.Duration
	if waiting != nil {
		var stop func()
		ends, again, stop = t.watchTurnEnds()
		defer stop()
	}
	poll := time.NewTicker(t.poll)
	defer poll.Stop()
	last, _ := os.Stat(t.current)
	moved := time.Now()
	stalled := false
	if waiting != nil && waiting() {
		return t.abandon(a, false), false
	}
	for {
		select {
		case h := <-a.got:
			if h == nil {
				return func() {}, false
			}
			return once(h), true
		case <-ctx.Done():
			return t.abandon(a, false), false
		case <-ends:
			// A turn ended, or none is held (between two turns): then
			// wait a little before the next shared lock, which would
			// be granted at once.
			next := offerPoll
			if now, _ := os.Stat(t.current); !sameFile(last, now) {
				last, moved, next = now, time.Now(), 0
				if waiting() {
					return t.abandon(a, false), false
				}
			}
			again <- next
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

// watchTurnEnds reports on ends each time a shared lock on .turn is
// granted: at once when no holder has it, otherwise when the holder's
// turn ends. After each report the consumer sends on again how long to
// wait before the next wait (0: at once); stop ends the watch. A thread
// blocked on the lock when stop is called leaves at the turn's end.
// Each shared lock is let go at once, so the next holder's exclusive
// lock waits an instant at most.
func (t *localTurns) watchTurnEnds() (ends <-chan struct{}, again chan<- time.Duration, stop func()) {
	endCh := make(chan struct{}, 1)
	againCh := make(chan time.Duration, 1)
	done := make(chan struct{})
	go func() {
		for {
			l, err := osfile.AcquireShared(t.turn)
			if err != nil {
				return // the 100 ms poll and the lock itself remain
			}
			_ = l.Release()
			select {
			case endCh <- struct{}{}:
			case <-done:
				return
			}
			var wait time.Duration
			select {
			case wait = <-againCh:
			case <-done:
				return
			}
			if wait > 0 {
				select {
				case <-time.After(wait):
				case <-done:
					return
				}
			}
		}
	}()
	return endCh, againCh, sync.OnceFunc(func() { close(done) })
}

// acquire starts a thread blocked on the lock file. Granted, the turn
// goes to the Take waiting on it, or back at once when none does (the
// acquisition is pending); t.mu is held.
func (t *localTurns) acquire() *acquisition {
	a := &acquisition{got: make(chan *hold, 1)}
	go func() {
		l, err := osfile.Acquire(t.path, 0o600)
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.pending == a { // nobody waits for it
			t.pending, t.stalled = nil, false
			_ = l.Release()
			return
		}
		var h *hold
		if err == nil {
			h = t.holdTurn(l) // .turn at once, not when the Take is done offering
		}
		a.got <- h
	}()
	return a
}

// abandon ends a wait without the turn: a turn granted meanwhile is given
// back, otherwise the acquisition is left pending for the next Take.
func (t *localTurns) abandon(a *acquisition, stalled bool) func() {
	t.mu.Lock()
	defer t.mu.Unlock()
	select {
	case h := <-a.got:
		if h != nil {
			h.release()
		}
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

// once returns the release of a turn had (safe to call more than once).
func once(h *hold) func() {
	var done atomic.Bool
	return func() {
		if done.CompareAndSwap(false, true) {
			h.release()
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
