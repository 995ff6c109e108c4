package remote

import (
	"context"

	"github.com/slivingdoc/slivingdoc/cas"
)

// Turnstile orders publication attempts among writers that can reach one
// another more cheaply than through the store: the processes of one
// machine (server/turns.go keeps a lock file per store). An attempt holds
// a turn from its read of `current` to the outcome of its conditional
// write, so no other holder's write lands in between and the attempt does
// not lose the race to it. It never decides acceptance, only timing: the
// conditional write stays the authority, writers that do not share the
// turnstile (another machine) still race, and a turn that cannot be had
// (the turns stuck behind a stopped holder, a lock that cannot be opened)
// is not waited for.
//
// Why it pays: a lost race costs a backoff, a re-read, a rebuild and a
// second upload, and on SeaweedFS conditional writes of one key that meet
// wait for its lock in steps of a second (ten at once: median 1 s, last
// 2 s; thirty: median 3 s, last 7 s; docs/benchmarks.md).
type Turnstile interface {
	// Take waits for this writer's turn and returns the function that
	// ends it (safe to call more than once). It may return without a
	// turn (a no-op release): when ctx ends, or when it judges the turns
	// stuck. When the turn is not free at once, waiting (if not nil) is
	// called, then again each time another holder's turn ends with a
	// publication (the kept state of Nearby moved); when it returns true
	// the wait ends without the turn. held reports whether the turn was
	// had.
	Take(ctx context.Context, waiting func() bool) (release func(), held bool)
}

// takeTurn returns the release of a turn, or a no-op without a Turnstile
// (held false).
func (n *Notebook) takeTurn(ctx context.Context, waiting func() bool) (func(), bool) {
	if n.opts.Turns == nil {
		return func() {}, false
	}
	return n.opts.Turns.Take(ctx, waiting)
}

// Nearby holds the packs that writers sharing a Turnstile published
// lately (server/turns.go: files beside the lock). A writer whose turn
// comes after theirs must know their increments before it builds; read
// from here they cost no request inside the turn. Every pack read from it
// is checked against the manifest's size and BLAKE3, as one from the
// store is, so a stale or damaged file only means a store read. With
// offers (offers.go) it also holds, by their store keys, the segments a
// holder's write created and its group's union pack (checked by their
// descriptors' BLAKE3 and by object IDs).
//
// It also holds the state the last of them published (`current`'s bytes
// and ETag), which PublishNearby builds on instead of reading `current`:
// the conditional write proves it, as a long-lived writer's own last state
// is proved (PublishFrom). It is guessed on only while reliable: the
// writer that kept it had found `current` as the writer before it left it
// (writers of other machines, which would make each guess a wasted upload,
// break the streak).
type Nearby interface {
	Pack(key string) []byte // nil when it does not hold key
	KeepPack(key string, data []byte)
	Current() (data []byte, etag string, reliable bool) // nil when there is none
	KeepCurrent(data []byte, etag string, reliable bool)
}

// keepNearby offers an accepted publication (its pack, or with members
// the union of its pack and theirs, and the state it made when the
// store's reply proved it) to the writers that take turns with this one;
// it is called before the turn ends.
//
// A group's packs are kept as one file under the group pack's key (§4B's,
// never uploaded here): each member reaches the group's last generation
// by reading it (FetchGroupPack) instead of the increments of the whole
// group, most of which the kept state's tail no longer lists once the
// group is large, and the next holders catch up through it
// (catchUpGroupsNearby). A file per member besides cost the turn a file
// creation each (keeping took 83 ms of a 586 ms turn at 50 writers on 2
// cores, groups of about 20).
func (n *Notebook) keepNearby(accepted State, pub string, pack []byte, reliable bool, members ...Member) {
	if n.opts.Nearby == nil {
		return
	}
	own := accepted.Generation() - uint64(len(members))
	if len(members) == 0 {
		n.opts.Nearby.KeepPack(IncrementKey(own, pub), pack)
	} else {
		packs := [][]byte{pack}
		for _, m := range members {
			packs = append(packs, m.Pack)
		}
		if data, err := unionPack(packs); err == nil {
			n.opts.Nearby.KeepPack(GroupPackKey(own-1, pub), data)
		}
	}
	if accepted.Manifest != nil {
		for _, s := range accepted.Manifest.uploads { // the segments of its own (not carried)
			n.opts.Nearby.KeepPack(s.ref.Key(), s.data)
		}
	}
	if accepted.ETag != "" {
		data := accepted.encoded // the bytes the conditional write sent
		if data == nil {
			data = encodeManifest(accepted.Manifest)
		}
		n.opts.Nearby.KeepCurrent(data, accepted.ETag, reliable)
	}
}

// nearbyCurrent is the state the last writer sharing the turnstile
// published, if Nearby holds one that decodes, and whether it may be
// guessed on.
func (n *Notebook) nearbyCurrent() (State, bool) {
	if n.opts.Nearby == nil {
		return State{}, false
	}
	data, etag, reliable := n.opts.Nearby.Current()
	if data == nil || etag == "" {
		return State{}, false
	}
	m, err := DecodeManifest(data)
	if err != nil {
		return State{}, false
	}
	return State{Manifest: m, ETag: etag}, reliable
}

// maxNearbyCatchUp bounds how far behind a reader catches up through the
// kept packs one generation or group at a time (about what the nearby
// directory keeps); further behind, rollups serve it better.
const maxNearbyCatchUp = 256

// catchUpNearby catches up from reach as far as the packs kept nearby
// go, in order: a turn's group pack (offers.go) covers its whole group, a
// kept increment its own generation, and an increment the caller holds
// already (have) costs nothing. It returns the generation reached; the
// caller fetches the rest from the store. The increments after reach come
// from the history this machine holds (the tail of `current`, then
// segments in the process or kept nearby: a large group folds most of
// itself out of the tail); a segment only the store has ends it. Increments
// are checked against the manifest's size and BLAKE3, a group pack by the
// IDs of the heads it must hold (each object is checked by its ID when
// read, as FetchGroupPack's).
func (n *Notebook) catchUpNearby(ctx context.Context, state State, reach uint64, have func(key string) bool, keep func([]CaughtUpPack) error, st *CatchUpStats) (uint64, error) {
	if n.opts.Nearby == nil || state.Manifest == nil || state.Generation() <= reach || state.Generation()-reach > maxNearbyCatchUp {
		return reach, nil
	}
	// The history from what this machine holds: the segments older than
	// the tail that it does not hold were written by another machine,
	// whose increments are not nearby either (reading them from the
	// store cost a fleet of machines four GETs per commit, each a
	// carrier pack, for nothing).
	incs := n.localPublications(ctx, state, reach+1, state.Generation())
	var got []CaughtUpPack
	for i := 0; i < len(incs) && incs[i].Generation == reach+1; {
		key := GroupPackKey(reach, incs[i].Publication)
		if data := n.opts.Nearby.Pack(key); data != nil {
			if p, err := cas.OpenPack(data); err == nil {
				j := i
				for j < len(incs) {
					if _, err := p.Get(incs[j].Head); err != nil {
						break
					}
					j++
				}
				if j > i {
					got = append(got, CaughtUpPack{Key: key, Data: data})
					reach, i = incs[j-1].Generation, j
					continue
				}
			}
		}
		inc := incs[i]
		if have != nil && have(inc.Pack.Key) {
			reach, i = inc.Generation, i+1
			continue
		}
		data := n.opts.Nearby.Pack(inc.Pack.Key)
		if int64(len(data)) != inc.Pack.Size || cas.Sum(data) != inc.Pack.Sum {
			break
		}
		got = append(got, CaughtUpPack{Key: inc.Pack.Key, Data: data})
		reach, i = inc.Generation, i+1
	}
	if len(got) == 0 {
		return reach, nil
	}
	st.Nearby += len(got)
	return reach, keep(got)
}
