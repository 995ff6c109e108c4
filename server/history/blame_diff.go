package history

// The versions a blame walks, read as their chunks, and the line diff of
// two consecutive ones computed from the chunks they do not share.
//
// Consecutive versions of a file share every chunk but those around their
// edits: chunk boundaries depend on the content, so they fall in the same
// places again past an edit. A version is therefore read as its list of
// chunks, each decoded once (fileVersion, versionReader): what the walk
// reads per version is its new chunks, and it copies nothing. The diff of
// two versions starts from their chunk lists: the chunks they share in
// order are equal bytes, and only the stretches between them (regions) are
// compared, byte by byte from both ends, then line by line from both ends,
// down to the lines that differ. Where a region still holds lines on both
// sides (several edits close together), LineDiff of those lines alone
// finds its edits. Line numbers come from the LFs counted once per chunk.
//
// The result must be the diff merge.LineDiff gives for the two whole texts
// (log -p shows it, and blame's answers are defined by it), which is not
// always the diff of each region on its own: a line moved from one region
// to another, or a run of changes that could slide over equal lines,
// gives a whole-text diff that pairs lines across regions or places a
// change elsewhere. The regions' edits are used only when they provably
// are the whole-text ones; otherwise the two versions are copied whole and
// diffed by LineDiff. The proof: the regions' edits leave unchanged lines
// that are equal bytes and pair up in order (everything outside the
// regions, and the lines a region's own diff kept), and they are
// LineDiff's answer when every changed line of the old version occurs
// nowhere in the new one, and every changed line of the new version
// nowhere in the old one (checked against a count of each version's lines
// by hash, kept up to date edit by edit; a hash collision can only send a
// step to the whole diff). LineDiff sets aside the lines the two texts
// start and end with, then every line that only one side has (it cannot
// match): those are exactly the changed lines, so what is left is the same
// sequence on both sides, which matches whole. Its placement then moves a
// run of changes down while the run's first line equals the line after
// it, up while its last equals the line before it; those lines are
// unchanged, so they are in both versions, and no changed line equals one:
// no run moves, and the edits are the regions', in order.

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"sort"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/merge"
)

// fileVersion is one version of the walked file as its parts: one per
// chunk, or the inline content. Versions share the memory of the chunks
// they have in common.
type fileVersion struct {
	id      cas.ID
	chunked bool
	parts   [][]byte
	ids     []cas.ID // per part, its chunk's ID
	offs    []int    // per part, its offset in the content; then the size
	lfs     []int    // per part, the LFs before it; then all of them
	// pending holds the chunks being read until wait returns.
	pending []*chunkRead
}

func (v *fileVersion) add(id cas.ID, data []byte, lfs int) {
	if len(v.offs) == 0 {
		v.offs, v.lfs = []int{0}, []int{0}
	}
	v.parts, v.ids = append(v.parts, data), append(v.ids, id)
	v.offs = append(v.offs, v.offs[len(v.offs)-1]+len(data))
	v.lfs = append(v.lfs, v.lfs[len(v.lfs)-1]+lfs)
}

func (v *fileVersion) size() int {
	if len(v.offs) == 0 {
		return 0
	}
	return v.offs[len(v.offs)-1]
}

// lines counts the lines by the diffstat's rule (a final run without LF is
// a line).
func (v *fileVersion) lines() int {
	n := v.size()
	if n == 0 {
		return 0
	}
	k := v.lfs[len(v.lfs)-1]
	if v.byteAt(n-1) != '\n' {
		k++
	}
	return k
}

// part returns the index of the part holding offset x (< size).
func (v *fileVersion) part(x int) int {
	return sort.Search(len(v.parts), func(i int) bool { return v.offs[i+1] > x })
}

func (v *fileVersion) byteAt(x int) byte {
	k := v.part(x)
	return v.parts[k][x-v.offs[k]]
}

// lfsBefore counts the LFs of the content before offset x.
func (v *fileVersion) lfsBefore(x int) int {
	if x >= v.size() {
		return v.lfs[len(v.lfs)-1]
	}
	k := v.part(x)
	return v.lfs[k] + bytes.Count(v.parts[k][:x-v.offs[k]], []byte{'\n'})
}

// seg returns the contiguous bytes from offset x (< lim) to the end of its
// part or lim.
func (v *fileVersion) seg(x, lim int) []byte {
	k := v.part(x)
	return v.parts[k][x-v.offs[k] : min(v.offs[k+1], lim)-v.offs[k]]
}

// segBefore returns the contiguous bytes that end at offset x (> lo), from
// the start of their part or lo.
func (v *fileVersion) segBefore(x, lo int) []byte {
	k := v.part(x - 1)
	return v.parts[k][max(v.offs[k], lo)-v.offs[k] : x-v.offs[k]]
}

// indexLF returns the offset of the first LF in [from, to), or -1.
func (v *fileVersion) indexLF(from, to int) int {
	for x := from; x < to; {
		s := v.seg(x, to)
		if i := bytes.IndexByte(s, '\n'); i >= 0 {
			return x + i
		}
		x += len(s)
	}
	return -1
}

// lastIndexLF returns the offset of the last LF in [from, to), or -1.
func (v *fileVersion) lastIndexLF(from, to int) int {
	for x := to; x > from; {
		s := v.segBefore(x, from)
		if i := bytes.LastIndexByte(s, '\n'); i >= 0 {
			return x - len(s) + i
		}
		x -= len(s)
	}
	return -1
}

// appendRange appends the bytes [from, to) to dst.
func (v *fileVersion) appendRange(dst []byte, from, to int) []byte {
	for x := from; x < to; {
		s := v.seg(x, to)
		dst = append(dst, s...)
		x += len(s)
	}
	return dst
}

// appendAll appends the whole content to dst.
func (v *fileVersion) appendAll(dst []byte) []byte {
	for _, p := range v.parts {
		dst = append(dst, p...)
	}
	return dst
}

// versionReader reads the versions of the walked file, newest first. It
// keeps the chunks of the version it read last: a version costs the chunks
// it changed, each decompressed, verified and its LFs counted once. With
// decoders set, a new chunk that an open cache holds is decoded by one of
// them (the cost of a version is nearly all decompression and
// verification, which the caches allow from several goroutines), and the
// version's wait collects it; the rest is read here.
type versionReader struct {
	src       cas.Source
	holder    func(cas.ID) *cas.Store // the open cache holding a chunk, or nil
	decoders  chan<- *chunkRead       // nil: every chunk is read here
	prev, cur map[cas.ID]*chunkRead
}

// chunkRead is one chunk of the walked file, read once, by the reader or
// by a decoder (from store); done is closed when it is.
type chunkRead struct {
	ref   cas.ChunkRef
	store *cas.Store
	data  []byte
	lfs   int
	err   error
	done  chan struct{}
}

// readChunk reads c.ref from src, checks it and counts its LFs.
func (c *chunkRead) read(src cas.Source) {
	co, err := getKind(src, c.ref.ID, cas.KindChunk)
	if err == nil {
		c.data, err = cas.DecodeChunk(co)
	}
	if err == nil && len(c.data) != int(c.ref.Size) {
		err = fmt.Errorf("%w: chunk of %d bytes, file says %d", cas.ErrCorrupt, len(c.data), c.ref.Size)
	}
	c.err = err
	if err == nil {
		c.lfs = bytes.Count(c.data, []byte{'\n'})
	}
}

// decodeChunks reads the chunks sent to in until it is closed.
func decodeChunks(in <-chan *chunkRead) {
	for c := range in {
		c.read(c.store)
		close(c.done)
	}
}

// read returns the version of file object id; a chunked one is complete
// once its wait returns.
func (r *versionReader) read(id cas.ID) (*fileVersion, error) {
	o, err := getKind(r.src, id, cas.KindFile)
	if err != nil {
		return nil, err
	}
	f, err := cas.DecodeFile(o)
	if err != nil {
		return nil, err
	}
	v := &fileVersion{id: id}
	if f.Chunks == nil {
		if len(f.Inline) > 0 {
			v.add(id, f.Inline, bytes.Count(f.Inline, []byte{'\n'}))
		}
		return v, nil
	}
	v.chunked = true
	v.pending = make([]*chunkRead, len(f.Chunks))
	// The map of the version before last is reused for this one.
	if r.cur == nil {
		r.cur = make(map[cas.ID]*chunkRead, len(f.Chunks))
	}
	clear(r.cur)
	for i, ref := range f.Chunks {
		c, ok := r.prev[ref.ID]
		if !ok {
			c, ok = r.cur[ref.ID]
		}
		if !ok {
			c = &chunkRead{ref: ref, done: make(chan struct{})}
			if r.decoders != nil {
				c.store = r.holder(ref.ID)
			}
			if c.store != nil {
				r.decoders <- c
			} else {
				c.read(r.src)
				close(c.done)
				if c.err != nil {
					return nil, fmt.Errorf("chunk %d: %w", i, c.err)
				}
			}
		}
		r.cur[ref.ID] = c
		v.pending[i] = c
	}
	r.prev, r.cur = r.cur, r.prev
	if r.decoders == nil {
		return v, v.wait()
	}
	return v, nil
}

// wait completes a version whose chunks are being read.
func (v *fileVersion) wait() error {
	if v.pending == nil {
		return nil
	}
	v.parts, v.ids = make([][]byte, 0, len(v.pending)), make([]cas.ID, 0, len(v.pending))
	v.offs, v.lfs = make([]int, 1, len(v.pending)+1), make([]int, 1, len(v.pending)+1)
	for i, c := range v.pending {
		<-c.done
		if c.err != nil {
			return fmt.Errorf("chunk %d: %w", i, c.err)
		}
		v.add(c.ref.ID, c.data, c.lfs)
	}
	v.pending = nil
	return nil
}

// getKind reads id from src and checks that it is that object, of kind
// want (sources verify the body against the ID themselves).
func getKind(src cas.Source, id cas.ID, want cas.Kind) (cas.Object, error) {
	o, err := src.Get(id)
	if err != nil {
		return cas.Object{}, err
	}
	if o.ID != id || len(o.Body) == 0 || cas.Kind(o.Body[0]) != o.Kind {
		return cas.Object{}, fmt.Errorf("%w: source returned a different object", cas.ErrCorrupt)
	}
	if o.Kind != want {
		return cas.Object{}, fmt.Errorf("%w: object is a %v, want a %v", cas.ErrCorrupt, o.Kind, want)
	}
	return o, nil
}

// versionDiffer diffs consecutive versions of a walk, the older against
// the one held, which it knows line by line through counts: for every
// line hash, how many lines of the held version have it.
type versionDiffer struct {
	seed   maphash.Seed
	counts map[uint64]int32
	// Scratch, kept from one diff to the next.
	regions    []diffRegion
	oldH, curH []uint64
	buf        []byte
	whole      [2][]byte
	// wholeDiffs counts the diffs of whole texts (tests).
	wholeDiffs int
}

// diffRegion is a stretch where two versions differ: [o0, o1) of the old
// one and [n0, n1) of the new one, then, once set, the changed lines'
// bytes [so, eo) and [sn, en), each a run of whole lines.
type diffRegion struct {
	o0, o1, n0, n1 int
	so, eo, sn, en int
}

func newVersionDiffer(head []byte) *versionDiffer {
	d := &versionDiffer{seed: maphash.MakeSeed()}
	d.reset(head)
	return d
}

// reset counts the lines of content, the held version.
func (d *versionDiffer) reset(content []byte) {
	d.counts = make(map[uint64]int32, merge.CountLines(content))
	forLines(content, func(line []byte) { d.counts[maphash.Bytes(d.seed, line)]++ })
}

// forLines calls f with each line of content, its LF included.
func forLines(content []byte, f func(line []byte)) {
	for i := 0; i < len(content); {
		k := bytes.IndexByte(content[i:], '\n')
		if k < 0 {
			f(content[i:])
			return
		}
		f(content[i : i+k+1])
		i += k + 1
	}
}

// diff returns merge.LineDiff(old content, cur content), where cur is the
// held version, and makes old the held one in the counts.
func (d *versionDiffer) diff(old, cur *fileVersion) []merge.Edit {
	// Past about a million distinct lines LineDiff gives up matching and
	// marks every line of the middle changed: no region diff is that.
	if old.chunked && cur.chunked && old.lines() < 1<<20 && cur.lines() < 1<<20 {
		if edits, ok := d.fromChunks(old, cur); ok {
			return edits
		}
	}
	d.wholeDiffs++
	a := old.appendAll(d.whole[0][:0])
	b := cur.appendAll(d.whole[1][:0])
	d.whole[0], d.whole[1] = a, b
	edits := merge.LineDiff(a, b)
	d.oldH = d.hashEdited(d.oldH[:0], a, edits, true)
	d.curH = d.hashEdited(d.curH[:0], b, edits, false)
	d.apply()
	return edits
}

// fromChunks is diff from the regions where the chunk lists differ; false
// when their edits are not provably the whole-text diff (see the file's
// comment), and then the counts are unchanged.
func (d *versionDiffer) fromChunks(old, cur *fileVersion) ([]merge.Edit, bool) {
	rs := d.align(old, cur)
	if len(rs) == 0 {
		return nil, false // the same chunks: only the same file would have them
	}
	// Set aside the bytes each region starts and ends with in both.
	for i := range rs {
		r := &rs[i]
		c := commonPrefixAt(old, r.o0, r.o1, cur, r.n0, r.n1)
		r.so, r.sn = r.o0+c, r.n0+c
		s := commonSuffixAt(old, r.so, r.o1, cur, r.sn, r.n1)
		r.eo, r.en = r.o1-s, r.n1-s
		if r.so == r.eo && r.sn == r.en {
			// Equal bytes in other chunks: only the same content would
			// have them (chunk boundaries depend on it); no proof here.
			return nil, false
		}
	}
	// Widen each to whole lines: back to the start of the line of its
	// first differing byte, on to the end of the line of its last. The
	// bytes from one region's end to the next region's start are equal in
	// both versions, so one offset moves both by the same amount; where
	// fewer than one whole line is left between two regions, they are one.
	out := rs[:0]
	for i := 0; i < len(rs); {
		r := rs[i]
		lo := 0
		if len(out) > 0 {
			lo = out[len(out)-1].eo
		}
		start := old.lastIndexLF(lo, r.so) + 1
		if start == 0 && lo > 0 {
			// Unreachable: the previous region ended a whole line or
			// more before this one starts.
			return nil, false
		}
		r.sn -= r.so - start
		r.so = start
		// The end: merge the next regions while no whole line is between.
		for {
			hi, hiNext := old.size(), -1
			if i+1 < len(rs) {
				hi, hiNext = rs[i+1].so, rs[i+1].so
			}
			end := r.eo
			if !(lineStartAt(old, r.eo) && lineStartAt(cur, r.en)) {
				if k := old.indexLF(r.eo, hi); k >= 0 {
					end = k + 1
				} else if hiNext < 0 {
					end = old.size()
				} else {
					end = -1 // no LF before the next region
				}
			}
			if end >= 0 && hiNext >= 0 {
				// A whole line must be left before the next region's start.
				if k := old.lastIndexLF(end, hiNext); k < 0 {
					end = -1
				}
			}
			if end < 0 {
				i++
				r.eo, r.en = rs[i].eo, rs[i].en
				continue
			}
			r.en += end - r.eo
			r.eo = end
			break
		}
		// The bytes set aside were cut at bytes, not lines: the lines a
		// region's changes start and end with may still be equal (a line
		// removed before one that starts the same).
		d.trimLines(old, cur, &r)
		if r.so == r.eo && r.sn == r.en {
			return nil, false // unreachable: the regions' bytes differ
		}
		out = append(out, r)
		i++
	}
	rs = out
	d.regions = rs[:0]

	// The changed lines: each region's, as one run per version when one
	// version has none or each has one, else as LineDiff of the region's
	// lines finds them (lines equal in both may be left in between). Their
	// hashes are checked against the counts.
	var edits []merge.Edit
	d.oldH, d.curH = d.oldH[:0], d.curH[:0]
	for _, r := range rs {
		lo, ln := old.lfsBefore(r.so), cur.lfsBefore(r.sn) // line starts
		no, nn := linesIn(old, r.so, r.eo), linesIn(cur, r.sn, r.en)
		if no == 0 || nn == 0 || (no == 1 && nn == 1) {
			edits = append(edits, merge.Edit{OldStart: lo, OldEnd: lo + no, NewStart: ln, NewEnd: ln + nn})
			d.oldH = d.hashLines(d.oldH, old, r.so, r.eo)
			d.curH = d.hashLines(d.curH, cur, r.sn, r.en)
			continue
		}
		a := old.appendRange(d.whole[0][:0], r.so, r.eo)
		b := cur.appendRange(d.whole[1][:0], r.sn, r.en)
		d.whole[0], d.whole[1] = a, b
		sub := merge.LineDiff(a, b)
		d.oldH = d.hashEdited(d.oldH, a, sub, true)
		d.curH = d.hashEdited(d.curH, b, sub, false)
		for _, e := range sub {
			edits = append(edits, merge.Edit{OldStart: lo + e.OldStart, OldEnd: lo + e.OldEnd, NewStart: ln + e.NewStart, NewEnd: ln + e.NewEnd})
		}
	}
	for _, h := range d.oldH {
		if d.counts[h] != 0 {
			return nil, false // the line is in the new version too
		}
	}
	if !d.onlyIn(d.curH) {
		return nil, false // the new version has one outside its changes
	}
	d.apply()
	return edits, true
}

// apply makes the version whose changed lines' hashes are in d.oldH the
// held one in the counts, from the held one's, in d.curH.
func (d *versionDiffer) apply() {
	for _, h := range d.curH {
		if d.counts[h]--; d.counts[h] == 0 {
			delete(d.counts, h)
		}
	}
	for _, h := range d.oldH {
		d.counts[h]++
	}
}

// hashEdited appends the hashes of the lines of text that edits change on
// its side (the old one with old).
func (d *versionDiffer) hashEdited(hs []uint64, text []byte, edits []merge.Edit, old bool) []uint64 {
	k, e := 0, 0 // the line at offset x, the next edit
	for x := 0; x < len(text) && e < len(edits); k++ {
		end := len(text)
		if i := bytes.IndexByte(text[x:], '\n'); i >= 0 {
			end = x + i + 1
		}
		lo, hi := edits[e].NewStart, edits[e].NewEnd
		if old {
			lo, hi = edits[e].OldStart, edits[e].OldEnd
		}
		if k >= lo && k < hi {
			hs = append(hs, maphash.Bytes(d.seed, text[x:end]))
		}
		for e < len(edits) && k+1 >= hiOf(edits[e], old) {
			e++
		}
		x = end
	}
	return hs
}

func hiOf(e merge.Edit, old bool) int {
	if old {
		return e.OldEnd
	}
	return e.NewEnd
}

// trimLines takes out of r's changes the whole lines they start and end
// with in both versions.
func (d *versionDiffer) trimLines(old, cur *fileVersion, r *diffRegion) {
	for r.so < r.eo && r.sn < r.en {
		eo, en := lineEnd(old, r.so, r.eo), lineEnd(cur, r.sn, r.en)
		if !equalAt(old, r.so, eo, cur, r.sn, en) {
			break
		}
		r.so, r.sn = eo, en
	}
	for r.so < r.eo && r.sn < r.en {
		so, sn := old.lastIndexLF(r.so, r.eo-1)+1, cur.lastIndexLF(r.sn, r.en-1)+1
		so, sn = max(so, r.so), max(sn, r.sn)
		if !equalAt(old, so, r.eo, cur, sn, r.en) {
			break
		}
		r.eo, r.en = so, sn
	}
}

// lineEnd returns the end of the line that starts at offset x of v, at
// most to.
func lineEnd(v *fileVersion, x, to int) int {
	if k := v.indexLF(x, to); k >= 0 {
		return k + 1
	}
	return to
}

// equalAt reports whether v[a0:a1] and w[b0:b1] are equal.
func equalAt(v *fileVersion, a0, a1 int, w *fileVersion, b0, b1 int) bool {
	return a1-a0 == b1-b0 && commonPrefixAt(v, a0, a1, w, b0, b1) == a1-a0
}

// onlyIn reports whether every line of the held version with a hash in
// hs is one of the lines hs counts.
func (d *versionDiffer) onlyIn(hs []uint64) bool {
	if len(hs) <= 16 {
		for _, h := range hs {
			n := int32(0)
			for _, g := range hs {
				if g == h {
					n++
				}
			}
			if d.counts[h] != n {
				return false
			}
		}
		return true
	}
	n := make(map[uint64]int32, len(hs))
	for _, h := range hs {
		n[h]++
	}
	for h, k := range n {
		if d.counts[h] != k {
			return false
		}
	}
	return true
}

// align pairs the chunks two versions share, in order, and returns the
// regions between them where their chunks differ, in byte offsets.
func (d *versionDiffer) align(old, cur *fileVersion) []diffRegion {
	rs := d.regions[:0]
	a, b := old.ids, cur.ids
	var at map[cas.ID][]int // positions in b, made on first need
	i, j := 0, 0
	for {
		for i < len(a) && j < len(b) && a[i] == b[j] {
			i, j = i+1, j+1
		}
		if i == len(a) && j == len(b) {
			break
		}
		// The nearest pair of equal chunks past i and j, by the chunks
		// skipped on both sides; none: the region runs to the ends. A
		// short list is searched, a long one through a map.
		if at == nil && len(b) > 64 {
			at = make(map[cas.ID][]int, len(b))
			for k, id := range b {
				at[id] = append(at[id], k)
			}
		}
		bi, bj := len(a), len(b)
		for k := i; k < len(a) && k-i < (bi-i)+(bj-j); k++ {
			if p := nextAt(b, at, a[k], j); p >= 0 && (k-i)+(p-j) < (bi-i)+(bj-j) {
				bi, bj = k, p
			}
		}
		rs = append(rs, diffRegion{o0: old.offs[i], o1: old.offs[bi], n0: cur.offs[j], n1: cur.offs[bj]})
		i, j = bi, bj
	}
	d.regions = rs
	return rs
}

// nextAt returns the first position at or after j of id in b (through at,
// its positions, when not nil), or -1.
func nextAt(b []cas.ID, at map[cas.ID][]int, id cas.ID, j int) int {
	if at == nil {
		for p := j; p < len(b); p++ {
			if b[p] == id {
				return p
			}
		}
		return -1
	}
	for _, p := range at[id] {
		if p >= j {
			return p
		}
	}
	return -1
}

// hashLines appends the hashes of the lines in [from, to) of v.
func (d *versionDiffer) hashLines(hs []uint64, v *fileVersion, from, to int) []uint64 {
	for x := from; x < to; {
		end := to
		if k := v.indexLF(x, to); k >= 0 {
			end = k + 1
		}
		hs = append(hs, maphash.Bytes(d.seed, d.bytes(v, x, end)))
		x = end
	}
	return hs
}

// bytes returns the content [from, to) of v, copied only when it spans
// parts.
func (d *versionDiffer) bytes(v *fileVersion, from, to int) []byte {
	if s := v.seg(from, to); len(s) == to-from {
		return s
	}
	d.buf = v.appendRange(d.buf[:0], from, to)
	return d.buf
}

// linesIn counts the lines of v in [from, to), a run of whole lines.
func linesIn(v *fileVersion, from, to int) int {
	n := 0
	for x := from; x < to; {
		seg := v.seg(x, to)
		n += bytes.Count(seg, []byte{'\n'})
		x += len(seg)
		if x == to && seg[len(seg)-1] != '\n' {
			n++ // the final line without LF
		}
	}
	return n
}

// lineStartAt reports whether offset x of v starts a line (or is its end).
func lineStartAt(v *fileVersion, x int) bool { return x == 0 || v.byteAt(x-1) == '\n' }

// commonPrefixAt returns the length of the common prefix of v[a:a1] and
// w[b:b1].
func commonPrefixAt(v *fileVersion, a, a1 int, w *fileVersion, b, b1 int) int {
	n := 0
	for a+n < a1 && b+n < b1 {
		pa, pb := v.seg(a+n, a1), w.seg(b+n, b1)
		m := min(len(pa), len(pb))
		k := merge.CommonPrefix(pa[:m], pb[:m])
		n += k
		if k < m {
			break
		}
	}
	return n
}

// commonSuffixAt returns the length of the common suffix of v[a:a1] and
// w[b:b1].
func commonSuffixAt(v *fileVersion, a, a1 int, w *fileVersion, b, b1 int) int {
	n := 0
	for a1-n > a && b1-n > b {
		pa, pb := v.segBefore(a1-n, a), w.segBefore(b1-n, b)
		m := min(len(pa), len(pb))
		k := merge.CommonSuffix(pa[len(pa)-m:], pb[len(pb)-m:])
		n += k
		if k < m {
			break
		}
	}
	return n
}
