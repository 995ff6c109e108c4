package cas

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/slivingdoc/slivingdoc/internal/noinit"
)

// Tree deltas, pack version 2 (docs/format.md 4.8): a record may store a
// tree as its base's ID and the entry edits that turn the base into it,
//
//	base ID [32] | edit count u32 (>= 1) | edits, strictly increasing by name:
//	op u8 (0 remove, 2 set file, 3 set tree) | name length u16 | name | ID [32] (set only)
//
// because a one-line change rewrites a whole directory tree of 32-byte IDs
// that do not compress, while its change is one entry. The object keeps
// its ID, the BLAKE3 of its full canonical body: only the pack's way of
// storing it differs, so nothing above this package sees deltas.
const (
	// MaxDeltaDepth bounds the deltas a reader applies to rebuild one tree
	// (a delta whose base is a delta, and so on): it bounds the work of
	// one read and ends any cycle of records that are each other's base.
	MaxDeltaDepth = 64
	// WriteDeltaDepth is the deepest chain PutDelta writes: a tree whose
	// base is already this many deltas deep is stored whole, so chains in
	// the writer's store stay far inside what readers accept, even for a
	// reader that holds a base through a longer chain than the writer.
	WriteDeltaDepth = 16
)

// ErrMissingBase: a tree stored as a delta whose base the reader holds
// nowhere (not in the pack, not in the store or Source it reads bases
// from). It is not ErrCorrupt: the record becomes readable once the base
// is held; in the local store, where every base was present when the pack
// was added, it means the base's pack was removed since, or the base ID
// was damaged in place.
var ErrMissingBase error = noinit.Error("cas: delta base not held")

// Delta edit operations; a set's op is the entry's kind.
const (
	deltaRemove  = 0
	deltaBaseLen = 32 + 4
	deltaEditMin = 1 + 2 + 1 // a remove of a one-byte name
)

// depthSource is a Source that knows how it stores objects: getDepth
// returns id rebuilt through at most budget deltas, and how many it
// applied. Pack, Store and the set of packs being added implement it, so
// a chain that crosses them is bounded by one budget.
type depthSource interface {
	getDepth(id ID, budget int) (Object, int, error)
}

// GetDepth returns the object id from src and the number of deltas src
// applied to rebuild it (0: stored whole). A writer passes the depth of a
// base, as its own store holds it, to PutDelta. A Source that does not
// store deltas (an ObjectSet) always reports 0.
func GetDepth(src Source, id ID) (Object, int, error) {
	switch s := src.(type) {
	case *Pack:
		// As Pack.Get: only the pack's own objects, in a body of their own.
		if !s.has(id) {
			return Object{}, 0, ErrNotFound
		}
		o, depth, err := s.getDepth(id, MaxDeltaDepth)
		o.Body = bytes.Clone(o.Body)
		return o, depth, err
	case depthSource:
		return s.getDepth(id, MaxDeltaDepth)
	}
	o, err := src.Get(id)
	return o, 0, err
}

// getBase reads the base of a delta from src within budget.
func getBase(src Source, id ID, budget int) (Object, int, error) {
	if src == nil {
		return Object{}, 0, ErrNotFound
	}
	if ds, ok := src.(depthSource); ok {
		return ds.getDepth(id, budget)
	}
	o, err := src.Get(id)
	return o, 0, err
}

// resolve returns the object of record r: decoded if stored whole, or
// rebuilt from its base, which bases returns within budget-1 further
// deltas. The depth is the number of deltas applied.
func (r record) resolve(budget int, bases func(id ID, budget int) (Object, int, error)) (Object, int, error) {
	return r.rebuild(budget, true, bases)
}

// rebuild is resolve that checks a tree it rebuilds from a delta against
// its ID only if verify is set. A reader rebuilding a chain of deltas
// verifies the tree it returns, and skips the check of the bases on the
// way: a wrong base yields a wrong tree, which fails that final check,
// and the reader then rebuilds the chain again checking every link, to
// name (and avoid) the damaged record.
func (r record) rebuild(budget int, verify bool, bases func(id ID, budget int) (Object, int, error)) (Object, int, error) {
	if r.enc != encodingDelta {
		o, err := r.whole()
		return o, 0, err
	}
	if budget <= 0 {
		return Object{}, 0, corruptf("tree %v: more than %d deltas to rebuild", r.id, MaxDeltaDepth)
	}
	if len(r.data) < deltaBaseLen {
		return Object{}, 0, corruptf("tree delta of %d bytes", len(r.data))
	}
	baseID := ID(r.data[:32])
	if baseID.IsZero() || baseID == r.id {
		return Object{}, 0, corruptf("tree delta names itself or the zero ID as its base")
	}
	base, depth, err := bases(baseID, budget-1)
	switch {
	case errors.Is(err, ErrNotFound):
		return Object{}, 0, fmt.Errorf("tree %v: base %v: %w", r.id, baseID, ErrMissingBase)
	case err != nil:
		return Object{}, 0, fmt.Errorf("tree %v: base %v: %w", r.id, baseID, err)
	case base.ID != baseID || base.Kind != KindTree:
		return Object{}, 0, corruptf("tree %v: base %v is a %v", r.id, baseID, base.Kind)
	}
	body, err := applyDelta(base.Body, r.data[32:], r.bodyLen)
	if err != nil {
		return Object{}, 0, fmt.Errorf("tree %v: %w", r.id, err)
	}
	o := Object{ID: r.id, Kind: KindTree, Body: body}
	if verify {
		if err := o.verify(); err != nil {
			return Object{}, 0, err
		}
	}
	return o, depth + 1, nil
}

// deltaEdit is one decoded edit.
type deltaEdit struct {
	op   byte
	name []byte
	id   ID
}

// decodeEdits decodes the edits of a delta (after its base ID), checking
// the rules that do not need the base: known ops, valid names in strictly
// increasing order, non-zero IDs, no trailing bytes.
func decodeEdits(b []byte) ([]deltaEdit, error) {
	r := reader{b: b}
	n := r.u32("delta edit count")
	if r.err != nil {
		return nil, r.err
	}
	// Sized by the bytes present, never by the untrusted count alone.
	if n == 0 || uint64(n) > uint64(len(r.b)/deltaEditMin) {
		return nil, corruptf("tree delta declares %d edits in %d bytes", n, len(r.b))
	}
	edits := make([]deltaEdit, n)
	for i := range edits {
		e := &edits[i]
		e.op = r.u8("delta edit op")
		e.name = r.take(int(r.u16("delta edit name length")), "delta edit name")
		if e.op != deltaRemove {
			e.id = r.id("delta edit ID")
		}
		if r.err != nil {
			return nil, r.err
		}
		if e.op != deltaRemove && e.op != byte(KindFile) && e.op != byte(KindTree) {
			return nil, corruptf("tree delta edit %d has op %d", i, e.op)
		}
		if err := checkName(e.name); err != nil {
			return nil, corruptf("tree delta edit %d: %v", i, err)
		}
		if e.op != deltaRemove && e.id.IsZero() {
			return nil, corruptf("tree delta edit %d sets the zero ID", i)
		}
		if i > 0 && bytes.Compare(edits[i-1].name, e.name) >= 0 {
			return nil, corruptf("tree delta edits %d and %d are not in strict name order", i-1, i)
		}
	}
	return edits, r.done("tree delta")
}

// applyDelta rebuilds a tree body from its base's body and the edits,
// which must produce exactly bodyLen bytes obeying the tree rules. It
// copies the base's unchanged entries as they are encoded, without
// decoding them into TreeEntry values: a read through a chain of deltas
// applies one per step, and the allocations of decoding were most of its
// cost.
func applyDelta(baseBody, edits []byte, bodyLen uint32) ([]byte, error) {
	if err := checkTree(baseBody); err != nil {
		return nil, err
	}
	ed, err := decodeEdits(edits)
	if err != nil {
		return nil, err
	}
	if bodyLen < treeHeader {
		return nil, corruptf("tree delta declares a body of %d bytes", bodyLen)
	}
	out := make([]byte, treeHeader, bodyLen)
	out[0] = byte(KindTree)
	count := 0
	add := func(entry []byte) error {
		if len(out)+len(entry) > int(bodyLen) {
			return corruptf("tree delta rebuilds more than the declared %d bytes", bodyLen)
		}
		out = append(out, entry...)
		count++
		return nil
	}
	// The base's entries, one at a time: checkTree proved them well formed
	// and in order, so each is kind, name length, name, ID.
	rest := baseBody[treeHeader:]
	next := func() (entry, name []byte) {
		if len(rest) == 0 {
			return nil, nil
		}
		n := 1 + 2 + int(le.Uint16(rest[1:])) + 32
		entry, rest = rest[:n], rest[n:]
		return entry, entry[3 : n-32]
	}
	entry, name := next()
	var set []byte // the encoding of one set edit
	for k, e := range ed {
		for ; entry != nil && bytes.Compare(name, e.name) < 0; entry, name = next() {
			if err := add(entry); err != nil {
				return nil, err
			}
		}
		present := entry != nil && bytes.Equal(name, e.name)
		if e.op != deltaRemove {
			set = append(set[:0], e.op)
			set = le.AppendUint16(set, uint16(len(e.name)))
			set = append(set, e.name...)
			set = append(set, e.id[:]...)
		}
		switch {
		case e.op == deltaRemove && !present:
			return nil, corruptf("tree delta edit %d removes an entry the base does not have", k)
		case present && e.op != deltaRemove && bytes.Equal(entry, set):
			return nil, corruptf("tree delta edit %d sets an entry to what the base holds", k)
		}
		if present {
			entry, name = next()
		}
		if e.op != deltaRemove {
			if err := add(set); err != nil {
				return nil, err
			}
		}
	}
	for ; entry != nil; entry, _ = next() {
		if err := add(entry); err != nil {
			return nil, err
		}
	}
	if len(out) != int(bodyLen) {
		return nil, corruptf("tree delta rebuilds %d bytes, declared %d", len(out), bodyLen)
	}
	le.PutUint32(out[1:], uint32(count))
	return out, nil
}

// encodeDelta returns the stored bytes of tree obj as its change from
// tree base (both valid trees, with different IDs).
func encodeDelta(obj, base Object) ([]byte, error) {
	to, err := decodeTree(obj.Body)
	if err != nil {
		return nil, err
	}
	from, err := decodeTree(base.Body)
	if err != nil {
		return nil, err
	}
	out := append(make([]byte, 0, 64), base.ID[:]...)
	out = le.AppendUint32(out, 0) // the count, set below
	n := 0
	set := func(e TreeEntry) {
		out = append(out, byte(e.Kind))
		out = le.AppendUint16(out, uint16(len(e.Name)))
		out = append(out, e.Name...)
		out = append(out, e.ID[:]...)
		n++
	}
	remove := func(e TreeEntry) {
		out = append(out, deltaRemove)
		out = le.AppendUint16(out, uint16(len(e.Name)))
		out = append(out, e.Name...)
		n++
	}
	i, j := 0, 0
	for i < len(from) || j < len(to) {
		switch {
		case j == len(to) || i < len(from) && from[i].Name < to[j].Name:
			remove(from[i])
			i++
		case i == len(from) || to[j].Name < from[i].Name:
			set(to[j])
			j++
		default:
			if from[i] != to[j] {
				set(to[j])
			}
			i++
			j++
		}
	}
	le.PutUint32(out[32:], uint32(n))
	return out, nil
}
