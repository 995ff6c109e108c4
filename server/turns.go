package server

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"strings"
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
//
// shared by every engine and process of the user whatever its private
// root (the load generator's agents each have their own). A turn is an
// exclusive lock on it (osfile: flock, LockFileEx), which the kernel drops
// when its holder dies, so a crashed writer never wedges the others. It
// only orders attempts: correctness never depends on it. A writer waits
// for its turn while the turns move, however many writers are ahead; when
// no holder has published for turnStall (a holder stopped with SIGSTOP, a
// publication stuck in a slow store) it stops waiting and goes ahead,
// racing as it would without turns.
type localTurns struct {
	path        string
	current     string // the state the last holder published (remote.Nearby): <dir>/<store>.current
	packs       string // the packs published lately (remote.Nearby): <dir>/<store>.packs/<base name of the key>
	stall, poll time.Duration
	// abandoned: a wait given up is still blocked on the lock. Until it
	// is granted, Take only tries the lock: a holder stopped for good
	// must not collect one blocked thread per call of a long-lived
	// engine.
	abandoned atomic.Bool
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
const (
	turnStall = 5 * time.Second
	turnPoll  = 100 * time.Millisecond
)

// newLocalTurns returns the turnstile of store's writers in dir, or nil
// (no turns) when dir is empty or cannot be made.
func newLocalTurns(dir, storeKey string) *localTurns {
	packs := filepath.Join(dir, storeKey+".packs")
	if dir == "" || os.MkdirAll(packs, 0o700) != nil {
		return nil
	}
	return &localTurns{path: filepath.Join(dir, storeKey+".lock"), current: filepath.Join(dir, storeKey+".current"), packs: packs, stall: turnStall, poll: turnPoll}
}

// options sets the remote.Options fields of t (none when t is nil).
func (t *localTurns) options(opts *remote.Options) {
	if t != nil {
		opts.Turns, opts.Nearby = t, t
	}
}

func (t *localTurns) Take(ctx context.Context) func() {
	// A free turn (a writer alone) is taken at once, without the waiter
	// below; while an abandoned wait is still blocked, only this try.
	if l, err := osfile.TryAcquire(t.path, 0o600); err == nil {
		return release(l)
	} else if t.abandoned.Load() || !errors.Is(err, osfile.ErrLocked) {
		return func() {}
	}
	got := make(chan *osfile.Lock, 1)
	go func() {
		l, err := osfile.Acquire(t.path, 0o600)
		if err != nil {
			l = nil
		}
		got <- l
	}()
	poll := time.NewTicker(t.poll)
	defer poll.Stop()
	last, _ := os.Stat(t.current)
	moved := time.Now()
wait:
	for {
		select {
		case l := <-got:
			if l == nil {
				return func() {}
			}
			return release(l)
		case <-ctx.Done():
			break wait
		case <-poll.C:
			// Turns move while the holders publish: each replaces
			// the kept state. A queue of any length is waited for;
			// a holder that publishes nothing for turnStall is not.
			now, _ := os.Stat(t.current)
			if !sameFile(last, now) {
				last, moved = now, time.Now()
			} else if time.Since(moved) >= t.stall {
				break wait
			}
		}
	}
	// Not waited for: the turn, once granted, is given back at once.
	t.abandoned.Store(true)
	go func() {
		if l := <-got; l != nil {
			_ = l.Release()
		}
		t.abandoned.Store(false)
	}()
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
