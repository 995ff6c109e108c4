package pstate

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/slivingdoc/slivingdoc/cas"
)

const (
	baselineMagic = "SLDBASE1"
	// baselineHeldMagic: a baseline with held paths; the held section
	// follows the entries. A baseline without held paths is still written
	// as SLDBASE1, byte for byte as before.
	baselineHeldMagic = "SLDBASE2"
)

// Baseline is A as P records it: the accepted state a directory was last
// synchronised to. Its files are the tree of an accepted head, except at
// held paths.
//
// Held paths: when a pull meets a file of L that still holds conflict
// blocks and that the remote changed again (merge.Unresolved), the file is
// not merged (blocks would nest) and the baseline keeps, for that path, the
// base the blocks were written against instead of the head's version. When
// the caller has resolved the blocks, the next pull or commit merges the
// resolution against that base, so the remote's newer lines arrive then (as
// a clean merge or fresh, unnested blocks) instead of being dropped as if
// the resolution had deleted them. Files holds the merge base (absent where
// the held base is absent); Held maps each held path to the head's own ID
// there (zero: the head lacks it). The held bases' content is kept in
// P/dirs/<h>/held/ (Dir.SaveHeld), since a later checkpoint may drop it
// from the chain.
type Baseline struct {
	Generation uint64
	Head       cas.ID
	Files      map[string]cas.ID // nil until Tree decodes entries
	Held       map[string]cas.ID // held path → Head's ID there (zero: absent)

	entries []byte // verified, undecoded entries of a loaded baseline
	count   int
}

// Exact reports whether the merge base is exactly Head's tree, so the fast
// paths that compare heads may skip the merge.
func (b *Baseline) Exact() bool { return b == nil || len(b.Held) == 0 }

// HeadTree is Head's tree (Tree with the held paths put back).
func (b *Baseline) HeadTree() map[string]cas.ID {
	files := b.Tree()
	if b.Exact() {
		return files
	}
	out := make(map[string]cas.ID, len(files))
	for p, id := range files {
		out[p] = id
	}
	for p, id := range b.Held {
		if id.IsZero() {
			delete(out, p)
		} else {
			out[p] = id
		}
	}
	return out
}

// Tree returns A's tree, decoding it on first use: a no-op pull needs
// only the head, and 10,000 entries are worth not decoding.
func (b *Baseline) Tree() map[string]cas.ID {
	if b.Files != nil {
		return b.Files
	}
	b.Files = make(map[string]cas.ID, b.count)
	// One string holds every path (as in the stat cache's decoding):
	// decoding does not allocate 10,000 strings.
	all := frozenString(b.entries)
	r := &reader{b: b.entries}
	for range b.count {
		l := int(r.u16())
		off := len(b.entries) - len(r.b)
		r.bytes(l)
		var id cas.ID
		copy(id[:], r.bytes(32))
		b.Files[all[off:off+l]] = id
	}
	b.entries = nil
	return b.Files
}

// SameFiles reports whether files is A's tree. On a loaded baseline it
// compares the encoded entries in place: a no-op commit learns that
// nothing changed without building A's map.
func (b *Baseline) SameFiles(files map[string]cas.ID) bool {
	if b.Files != nil {
		return maps.Equal(b.Files, files)
	}
	if len(files) != b.count {
		return false
	}
	r := &reader{b: b.entries}
	for range b.count {
		p := r.bytes(int(r.u16()))
		id, ok := files[string(p)]
		if !ok || !bytes.Equal(id[:], r.bytes(32)) {
			return false
		}
	}
	return true
}

// Delta returns the paths where files differs from A, each with its ID in
// files (zero: removed), and A's IDs at those paths. On a loaded baseline
// it walks the encoded entries once, looking each up in files; A's paths
// are decoded into a set only when files holds paths A lacks.
func (b *Baseline) Delta(files map[string]cas.ID) (changes, old map[string]cas.ID) {
	changes, old = map[string]cas.ID{}, map[string]cas.ID{}
	present := 0
	if b.Files != nil {
		for p, id := range b.Files {
			cur, ok := files[p]
			if ok {
				present++
			}
			if !ok || cur != id {
				changes[p], old[p] = cur, id
			}
		}
	} else {
		r := &reader{b: b.entries}
		for range b.count {
			p := r.bytes(int(r.u16()))
			var id cas.ID
			copy(id[:], r.bytes(32))
			cur, ok := files[string(p)]
			if ok {
				present++
			}
			if !ok || cur != id {
				changes[string(p)], old[string(p)] = cur, id
			}
		}
	}
	if present != len(files) { // L added paths
		base := b.Tree()
		for p, id := range files {
			if _, ok := base[p]; !ok {
				changes[p] = id
			}
		}
	}
	return changes, old
}

// EachPath calls fn for every file of A, from its decoded map or in
// place on its encoded entries (no map of 10,000 paths is built).
func (b *Baseline) EachPath(fn func(p []byte, id cas.ID)) {
	if b.Files != nil {
		for p, id := range b.Files {
			fn([]byte(p), id)
		}
		return
	}
	r := &reader{b: b.entries}
	for range b.count {
		p := r.bytes(int(r.u16()))
		var id cas.ID
		copy(id[:], r.bytes(32))
		if !r.ok() {
			return
		}
		fn(p, id)
	}
}

// Copy is a fresh value of b, whose entries are not decoded (Files nil):
// it shares the encoded entries, which are never written, and has Held of
// its own (a session sets Generation, decodes Files and replaces Held).
func (b *Baseline) Copy() Baseline {
	c := Baseline{Generation: b.Generation, Head: b.Head, entries: b.entries, count: b.count}
	if b.Held != nil {
		c.Held = make(map[string]cas.ID, len(b.Held))
		for p, id := range b.Held {
			c.Held[p] = id
		}
	}
	return c
}

// encodeBaseline writes entries in map order: the file is private and
// read whole, so sorting 10,000 paths on every call would buy nothing.
//
//	"SLDBASE1" (no held path) or "SLDBASE2"
//	u64 generation, head (32 bytes)
//	u32 n, n × (u16 path length, path, file ID)
//	SLDBASE2 only: u32 m, m × (u16 path length, path, head's ID), in path order
//	BLAKE3 of everything before
func encodeBaseline(b *Baseline) []byte {
	files := b.Tree()
	out := make([]byte, 0, len(baselineMagic)+48+(len(files)+len(b.Held))*(40+34)+32)
	if b.Exact() {
		out = append(out, baselineMagic...)
	} else {
		out = append(out, baselineHeldMagic...)
	}
	out = binary.BigEndian.AppendUint64(out, b.Generation)
	out = append(out, b.Head[:]...)
	out = binary.BigEndian.AppendUint32(out, uint32(len(files)))
	for p, id := range files {
		out = binary.BigEndian.AppendUint16(out, uint16(len(p)))
		out = append(out, p...)
		out = append(out, id[:]...)
	}
	if !b.Exact() {
		out = binary.BigEndian.AppendUint32(out, uint32(len(b.Held)))
		for _, p := range slices.Sorted(maps.Keys(b.Held)) {
			id := b.Held[p]
			out = binary.BigEndian.AppendUint16(out, uint16(len(p)))
			out = append(out, p...)
			out = append(out, id[:]...)
		}
	}
	sum := cas.Sum(out)
	return append(out, sum[:]...)
}

// DecodeBaseline decodes a baseline's file, checking its checksum:
// ErrCorrupt unless it is whole.
func DecodeBaseline(data []byte) (*Baseline, error) { return ParseBaseline(data, true) }

// ParseBaseline decodes a baseline, checking its checksum when verify is
// set (unset only for bytes this process encoded or already verified).
// The entries are checked for structure and left encoded (Tree decodes
// them).
func ParseBaseline(data []byte, verify bool) (*Baseline, error) {
	magic := baselineMagic
	if len(data) >= len(baselineHeldMagic) && string(data[:len(baselineHeldMagic)]) == baselineHeldMagic {
		magic = baselineHeldMagic
	}
	var r *reader
	if verify {
		var err error
		if r, err = newReader(data, magic); err != nil {
			return nil, err
		}
	} else {
		if len(data) < len(magic)+32 || string(data[:len(magic)]) != magic {
			return nil, ErrCorrupt
		}
		r = &reader{b: data[len(magic) : len(data)-32]}
	}
	b := &Baseline{Generation: r.u64()}
	copy(b.Head[:], r.bytes(32))
	b.count = int(r.u32())
	if b.count > len(data)/34 {
		return nil, ErrCorrupt
	}
	// Check the structure now (cheap, no allocation) so Tree cannot fail.
	b.entries = r.b
	for i := 0; i < b.count && r.ok(); i++ {
		r.bytes(int(r.u16()) + 32)
	}
	if magic == baselineHeldMagic && r.ok() {
		b.entries = b.entries[:len(b.entries)-len(r.b)]
		n := int(r.u32())
		if n == 0 || n > len(r.b)/34 {
			return nil, ErrCorrupt
		}
		b.Held = make(map[string]cas.ID, n)
		for i := 0; i < n && r.ok(); i++ {
			p := string(r.bytes(int(r.u16())))
			var id cas.ID
			copy(id[:], r.bytes(32))
			b.Held[p] = id
		}
	}
	if !r.done() {
		return nil, ErrCorrupt
	}
	return b, nil
}

// OldestBaseline returns the lowest generation of the baselines recorded
// under the private root private (only their headers are read); false
// when there is none. Both forms (SLDBASE1, and SLDBASE2 with held paths)
// carry the generation right after their magic; a baseline whose header
// is neither counts as generation 0, which pins everything.
func OldestBaseline(private string) (uint64, bool) {
	dirs, err := os.ReadDir(filepath.Join(private, "dirs"))
	if err != nil {
		return 0, false
	}
	var oldest uint64
	found := false
	head := make([]byte, len(baselineMagic)+8)
	for _, d := range dirs {
		f, err := os.Open(filepath.Join(private, "dirs", d.Name(), baselineFile))
		if err != nil {
			continue // never pulled
		}
		_, err = io.ReadFull(f, head)
		f.Close()
		g := uint64(0) // unreadable: pin everything, to be safe
		magic := string(head[:len(baselineMagic)])
		if err == nil && (magic == baselineMagic || magic == baselineHeldMagic) {
			g = binary.BigEndian.Uint64(head[len(baselineMagic):])
		}
		if !found || g < oldest {
			oldest, found = g, true
		}
	}
	return oldest, found
}

// baselineFile is A's file in a directory's records.
const baselineFile = "baseline"

// OpenBaseline opens A's file for ReadBaseline; nil and no error when the
// directory has none (never pulled, or its record lost).
func (d Dir) OpenBaseline() (*os.File, error) {
	f, err := os.Open(d.File(baselineFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return f, err
}

// ReadBaseline reads and decodes the open baseline file f, returning its
// bytes too (for the engine's memory of it). ErrCorrupt when the baseline
// cannot be trusted (the caller treats the directory as never pulled: a
// pull then keeps every local file, at worst as a conflict block, and
// commits are refused until then); any other error is the read's.
func ReadBaseline(f *os.File) (*Baseline, []byte, error) {
	data, err := readSized(f)
	if err != nil {
		return nil, nil, err
	}
	b, err := DecodeBaseline(data)
	if err != nil {
		return nil, nil, err
	}
	return b, data, nil
}

// WriteBaseline records b as A, durably and whole: by installing p when
// p holds b (Prepared.Matches), else by writing it through a temporary
// file. It returns the bytes A's file now holds.
func (d Dir) WriteBaseline(b *Baseline, p *Prepared) ([]byte, error) {
	if p != nil && p.Wait() == nil && p.Matches(b) {
		if err := p.install(d); err != nil {
			return nil, err
		}
		return p.data, nil
	}
	data := encodeBaseline(b)
	if err := WriteAtomic(d.File(baselineFile), data); err != nil {
		return nil, err
	}
	return data, nil
}
