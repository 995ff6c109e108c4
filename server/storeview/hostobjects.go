package storeview

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/pstate"
)

// The host's copies of the objects writers exchange. On a version-4
// store every commit uploads its change as a proposal object, the writer
// that folds a group reads every member's proposal and uploads a group
// pack, and every writer then catches up by reading the proposals and
// group packs of the generations it lacks. When the writers are agents
// of one user on one machine they share the default private root, and
// the object cache in it (DESIGN: one cache per store); but a proposal
// reaches that cache only once its proposer learns it was accepted
// (server/commit's keepOwnProposal), after the folder has read it and
// often after the others have caught up past it, and a group pack never
// does. So each of
// those reads went to the store: on SeaweedFS with 50 writers sharing one
// private root, 25 of the 38 requests of a commit were GETs of proposals
// this very machine had uploaded, and 90 of 115-129 in a burst of 100
// (docs/benchmarks.md).
//
// hostObjects is the engine's store (under remote.Notebook and publish
// alike) with a copy on this host of those objects, of the history
// segments every writer reads to find older generations' packs (6 GETs
// a commit at 50 writers), and of the registered descriptors of rollups
// and checkpoints every fold that lists reads (each named by its BLAKE3):
//
//   - A proposal version, group pack, segment or descriptor this host
//     PUTs is kept (written just before the PUT, removed if the store
//     refuses it); one it GETs from the store is kept too (unless a copy
//     is there already: a GET never replaces a PUT's copy).
//   - A GET of such a key reads the host's copy first. The copy is
//     checked before it is used (a proposal's descriptor against its
//     pack and key, any other against the BLAKE3 its key names); one
//     that fails is removed and the store is read instead. So a torn copy
//     (copies are not fsynced) costs a GET, never a proposal declined as
//     foreign.
//
// The rule the object caches of P keep (docs/publication.md, invariant
// 13): a copy holds what the store holds, or held, under the same key.
// It is filled only from bytes this host stores under that key (a PUT;
// the copy is read only through a key learned from the store, so once
// the store holds them) or that the store returned (a GET); the objects
// are immutable and named by what they are (a proposal version by its
// generation and publication ID, written by its one proposer; the others
// by their BLAKE3); and the copies live under P/stores/<key>, keyed by
// the store's ID, so another store met at the same URL never reads them.
// A copy has no role in acceptance: the fold reads the same bytes a GET
// would return, and `current` stays the only authority.
//
// Copies are grouped by epoch, hostEpochSpan generations each (a
// proposal's by the generation it was built on, a segment's by the last
// generation it indexes, a descriptor's by its own, a group pack's by the newest epoch this process
// has met): when a copy opens a new epoch, the epochs before the previous
// one are removed, so the copies cover about the last one to two spans of
// history, whatever its length, without a listing or a stat per object. A
// reader further behind reads the store, as before (its catch-up goes
// through rollups anyway).
type hostObjects struct {
	remote.Store
	dir func() string // P/stores/<key>/objects

	mu     sync.Mutex
	newest int64 // the newest epoch met (-1: none yet; listed on a need)
	listed bool  // the epoch directories were listed once
}

// hostEpochSpan is the number of generations one epoch of copies covers.
const hostEpochSpan = 512

func newHostObjects(s remote.Store, dir func() string) *hostObjects {
	return &hostObjects{Store: s, dir: dir, newest: -1}
}

// WithHostObjects is s with the host's copies under dir (the engine's
// P/stores/<key>/objects, which moves when the store is re-identified),
// but for a directory store: its objects are files on this host already,
// and a copy would only write each one twice.
func WithHostObjects(s remote.Store, dir func() string) remote.Store {
	if strings.HasPrefix(s.Identity(), "file://") {
		return s
	}
	return newHostObjects(s, dir)
}

// Kinds of the host's copies.
const (
	notCopied = iota
	copyProposal
	copyGroup
	copySegment
	copyRegistered
)

// hostKind says which of the host's copies key is: a proposal version, a
// segment or a registered descriptor (with the generation its epoch is
// counted from: a proposal's parent, a segment's last, a descriptor's
// own), a group pack, or none (notCopied); sum is the BLAKE3 the key of
// any but a proposal names.
func hostKind(key string) (kind int, g uint64, sum cas.ID) {
	switch k, g, sum, _, _ := remote.ParseProposalEntry(key); k {
	case remote.EntryProposal:
		return copyProposal, g, cas.ID{}
	case remote.EntryRollup, remote.EntryCheckpoint:
		if id, err := cas.ParseID(sum); err == nil {
			return copyRegistered, g, id
		}
		return notCopied, 0, cas.ID{}
	}
	if rest, ok := strings.CutPrefix(key, remote.GroupsPrefix); ok {
		hexSum, ok := strings.CutSuffix(rest, ".pack")
		id, err := cas.ParseID(hexSum)
		if !ok || err != nil {
			return notCopied, 0, cas.ID{}
		}
		return copyGroup, 0, id
	}
	if strings.HasPrefix(key, remote.SegmentsPrefix) {
		if _, _, last, sum, err := remote.ParseSegmentKey(key); err == nil {
			return copySegment, last, sum
		}
	}
	return notCopied, 0, cas.ID{}
}

// epochsFor returns the epochs a copy of key may be in, newest first,
// and the one a new copy goes to (-1: none known, do not keep).
func (h *hostObjects) epochsFor(key string) (look []int64, into int64, ok bool) {
	kind, g, _ := hostKind(key)
	switch kind {
	case copyProposal, copySegment, copyRegistered:
		e := int64(g / hostEpochSpan)
		return []int64{e}, e, true
	case copyGroup:
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.newest < 0 && !h.listed {
			h.listed = true
			h.newest = max(h.newest, newestEpoch(h.dir()))
		}
		if h.newest < 0 {
			return nil, -1, true
		}
		return []int64{h.newest, h.newest - 1}, h.newest, true
	}
	return nil, -1, false
}

// behind reports whether epoch e is older than the epochs kept: a reader
// far behind reads those objects once (its catch-up usually goes through
// rollups), and copying them would only refill what pruning removes.
func (h *hostObjects) behind(e int64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.newest >= 0 && e < h.newest-1
}

// meet records that epoch e exists.
func (h *hostObjects) meet(e int64) {
	h.mu.Lock()
	h.newest = max(h.newest, e)
	h.mu.Unlock()
}

// newestEpoch returns the newest epoch directory under dir (-1: none).
func newestEpoch(dir string) int64 {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return -1
	}
	newest := int64(-1)
	for _, ent := range ents {
		if e, err := strconv.ParseInt(ent.Name(), 10, 64); err == nil && ent.IsDir() && e >= 0 {
			newest = max(newest, e)
		}
	}
	return newest
}

func (h *hostObjects) path(epoch int64, key string) string {
	return filepath.Join(h.dir(), strconv.FormatInt(epoch, 10), pstate.HashKey(key))
}

// Get reads the host's copy of key first when key is one of the kinds
// it keeps; a GET from the store is kept.
func (h *hostObjects) Get(ctx context.Context, key string) ([]byte, string, error) {
	look, into, kept := h.epochsFor(key)
	if !kept {
		return h.Store.Get(ctx, key)
	}
	for _, e := range look {
		if e < 0 {
			continue
		}
		p := h.path(e, key)
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if validCopy(key, data) {
			return data, "", nil
		}
		_ = os.Remove(p) // damaged: the store's bytes replace it below
	}
	data, etag, err := h.Store.Get(ctx, key)
	if err == nil && into >= 0 && !h.behind(into) {
		h.keep(into, key, data, false)
	}
	return data, etag, err
}

// Put stores data under key, with a copy on this host written just
// before: a LIST may show the key as soon as the store applied the PUT,
// before its reply arrives, and a writer of this host that folds the
// proposal then must find the copy (each such miss was one GET). No one
// learns the key but from the store (a LIST, `current`, a segment), so a
// copy is read only once the store holds its bytes; a PUT refused for
// certain removes it. A copy replaces any: these are the bytes the store
// holds next.
func (h *hostObjects) Put(ctx context.Context, key string, data []byte) error {
	_, into, kept := h.epochsFor(key)
	if !kept {
		return h.Store.Put(ctx, key, data)
	}
	if into < 0 { // no copy in this P yet: a group pack of a new store
		into = 0
	}
	name := h.keep(into, key, data, true)
	err := h.Store.Put(ctx, key, data)
	if err != nil && !errors.Is(err, remote.ErrAmbiguous) && name != "" {
		_ = os.Remove(name) // the writer puts the same bytes again after an ambiguous reply
	}
	return err
}

// ListAfter keeps the store's own listing after a key (S3's StartAfter).
func (h *hostObjects) ListAfter(ctx context.Context, prefix, after string) ([]remote.ObjectInfo, error) {
	return remote.ListAfter(ctx, h.Store, prefix, after)
}

// validCopy reports whether data is a sound object for key: a copy is
// used only when it is what the key names.
func validCopy(key string, data []byte) bool {
	kind, _, sum := hostKind(key)
	switch kind {
	case copyProposal:
		_, _, err := remote.DecodeProposalV4(key, data)
		return err == nil
	case copyGroup, copySegment, copyRegistered:
		return cas.Sum(data) == sum
	}
	return false
}

// keep writes a copy of key into epoch e: over any copy when replace (a
// PUT's bytes), else only if there is none; it returns the copy's path
// when it wrote one. Best effort: a copy that cannot be written costs a
// later GET. Opening a new epoch removes those before the previous one.
func (h *hostObjects) keep(e int64, key string, data []byte, replace bool) string {
	h.meet(e)
	dir := filepath.Join(h.dir(), strconv.FormatInt(e, 10))
	if err := os.Mkdir(dir, 0o700); err == nil {
		h.prune(e)
	} else if !errors.Is(err, fs.ErrExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return ""
		}
		h.prune(e)
	}
	name := filepath.Join(dir, pstate.HashKey(key))
	if replace {
		if pstate.WriteReplace(name, data, false) != nil {
			return ""
		}
		return name
	}
	// Create only: a copy kept from a PUT is never replaced by a GET
	// that may have raced it.
	tmp, err := os.CreateTemp(dir, ".copy-*")
	if err != nil {
		return ""
	}
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Link(tmp.Name(), name) != nil {
		name = "" // not written, or a copy exists: it stays
	}
	_ = os.Remove(tmp.Name())
	return name
}

// prune removes the epochs before e − 1 (e was just created).
func (h *hostObjects) prune(e int64) {
	ents, err := os.ReadDir(h.dir())
	if err != nil {
		return
	}
	for _, ent := range ents {
		if old, err := strconv.ParseInt(ent.Name(), 10, 64); err == nil && old < e-1 {
			_ = os.RemoveAll(filepath.Join(h.dir(), ent.Name()))
		}
	}
}
