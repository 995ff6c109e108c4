package server

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/crashpoint"
	"github.com/slivingdoc/slivingdoc/merge"
)

// The rewrite record. Before L is rewritten, P records (P/dirs/<h>/
// rewrite-<checksum>, named by the recovery flag) exactly what the rewrite
// is about to do: for every path it writes or removes, what L held before
// (the scan's file ID, or absent), what it will hold after, and what the
// next baseline holds there; also every path where the next baseline
// differs from the current one although L already holds the result (an
// identical change on both sides). A crash leaves L part old, part new,
// with the old baseline A still recorded; merging that L against A would
// take every file the rewrite already wrote as a local change (the remote
// lines it brought in, added "on both sides") and conflict as soon as
// another writer edits next to them.
//
// Resynchronisation therefore first rolls the merge base forward, path by
// path: where L holds exactly the record's "after" (absent for a removal),
// the rewrite reached the file (or L already held the result), so that
// path's base becomes the next baseline's entry, as if the interrupted
// operation had finished. Where L holds "before" (not reached), A stays
// the base. Where L holds something else, the caller edited the file since
// the crash: if merging the rewrite's change (before → after) into it
// changes nothing, the edit was made on top of what the rewrite wrote and
// the base rolls forward too (rollEditedForward); otherwise (an edit of the
// old content, one too close to the rewrite's lines to tell, a "before"
// that cannot be read) A stays the base: at worst a conflict, never a
// silent loss of the remote's lines. The rolled base is not the tree of
// any head, so it is marked non-exact (baseline.Held) and every fast path
// that compares heads merges instead; a second crash during the
// resynchronisation records it (the overlay section) with its own rewrite.
//
// Encoding (all integers big-endian, paths as u16 length + bytes, IDs 32
// bytes):
//
//	"SLDRWRT1"
//	base head, next head
//	u32 n, n × (path, u8 present, ID)               overlay of A already rolled
//	u32 m, m × (path, u8 flags, before, after, next) flags: 1 before present,
//	                                                  2 after present, 4 next present
//	BLAKE3 of everything before
const rewriteMagic = "SLDRWRT1"

// rewriteEntry is one path of a rewrite record (zero ID: absent).
type rewriteEntry struct {
	path                string
	before, after, next cas.ID
}

type rewriteRecord struct {
	baseHead, nextHead cas.ID
	overlay            map[string]cas.ID // path → rolled base (zero: absent)
	entries            []rewriteEntry
}

func encodeRewrite(r *rewriteRecord) []byte {
	b := make([]byte, 0, len(rewriteMagic)+72+len(r.overlay)*75+len(r.entries)*(40+97)+32)
	b = append(b, rewriteMagic...)
	b = append(b, r.baseHead[:]...)
	b = append(b, r.nextHead[:]...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(r.overlay)))
	for _, p := range sortedKeys(r.overlay) {
		id := r.overlay[p]
		b = binary.BigEndian.AppendUint16(b, uint16(len(p)))
		b = append(b, p...)
		if id.IsZero() {
			b = append(b, 0)
		} else {
			b = append(b, 1)
		}
		b = append(b, id[:]...)
	}
	b = binary.BigEndian.AppendUint32(b, uint32(len(r.entries)))
	for _, e := range r.entries {
		b = binary.BigEndian.AppendUint16(b, uint16(len(e.path)))
		b = append(b, e.path...)
		var flags byte
		for i, id := range []cas.ID{e.before, e.after, e.next} {
			if !id.IsZero() {
				flags |= 1 << i
			}
		}
		b = append(b, flags)
		b = append(b, e.before[:]...)
		b = append(b, e.after[:]...)
		b = append(b, e.next[:]...)
	}
	sum := cas.Sum(b)
	return append(b, sum[:]...)
}

func decodeRewrite(data []byte) (*rewriteRecord, error) {
	r, err := newStateReader(data, rewriteMagic)
	if err != nil {
		return nil, err
	}
	rec := &rewriteRecord{overlay: map[string]cas.ID{}}
	copy(rec.baseHead[:], r.bytes(32))
	copy(rec.nextHead[:], r.bytes(32))
	n := int(r.u32())
	if n > len(data)/35 {
		return nil, errBadStateFile
	}
	for i := 0; i < n && r.ok(); i++ {
		p := string(r.bytes(int(r.u16())))
		r.bytes(1)
		var id cas.ID
		copy(id[:], r.bytes(32))
		rec.overlay[p] = id
	}
	m := int(r.u32())
	if m > len(data)/99 {
		return nil, errBadStateFile
	}
	for i := 0; i < m && r.ok(); i++ {
		e := rewriteEntry{path: string(r.bytes(int(r.u16())))}
		r.bytes(1)
		copy(e.before[:], r.bytes(32))
		copy(e.after[:], r.bytes(32))
		copy(e.next[:], r.bytes(32))
		rec.entries = append(rec.entries, e)
	}
	if !r.done() {
		return nil, errBadStateFile
	}
	return rec, nil
}

// saveRewrite writes the record (fsynced; the recovery flag written next
// in the same directory makes the rename durable) and returns its
// checksum, which the flag names. Each record is a file of its own,
// rewrite-<checksum>: a crash (or a full disk) after the record and
// before the new flag leaves the old flag naming the old record, which is
// still there, instead of a replaced one that no flag names.
func (d dirState) saveRewrite(r *rewriteRecord) (string, error) {
	data := encodeRewrite(r)
	sum := hex.EncodeToString(data[len(data)-32:])
	f, err := os.CreateTemp(d.path, ".tmp-*")
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		crashpoint.Hit(cpSaveRewrite, rewritePrefix+sum)
		err = os.Rename(tmp, d.file(rewritePrefix+sum))
	}
	if err != nil {
		os.Remove(tmp)
		return "", err
	}
	return sum, nil
}

const rewritePrefix = "rewrite-"

// loadRewrite returns the record the flag names, nil if there is none or
// it is another (older) one.
func (d dirState) loadRewrite(sum string) (*rewriteRecord, error) {
	if sum == "" {
		return nil, nil
	}
	if len(sum) != 64 || strings.Trim(sum, "0123456789abcdef") != "" {
		return nil, nil // not a checksum this version wrote
	}
	data, err := os.ReadFile(d.file(rewritePrefix + sum))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(data) < 32 || hex.EncodeToString(data[len(data)-32:]) != sum {
		return nil, nil
	}
	return decodeRewrite(data)
}

// removeRewrite removes every rewrite record (the flag naming one is gone).
func (d dirState) removeRewrite() {
	names, _ := filepath.Glob(filepath.Join(d.path, rewritePrefix+"*"))
	for _, n := range names {
		crashpoint.Hit(cpRemoveState, filepath.Base(n))
		os.Remove(n)
	}
}

// rewriteRecordFor describes the rewrite of changes towards next.
func (s *session) rewriteRecordFor(changes []change, next *baseline) *rewriteRecord {
	rec := &rewriteRecord{baseHead: s.baseHead(), overlay: s.rolled}
	if next != nil {
		rec.nextHead = next.Head
	}
	var nextFiles map[string]cas.ID
	if next != nil {
		nextFiles = next.files()
	}
	inChanges := make(map[string]bool, len(changes))
	for _, c := range changes {
		inChanges[c.path] = true
		e := rewriteEntry{path: c.path, before: s.scan.files[c.path], next: nextFiles[c.path]}
		if !c.del {
			e.after = c.id
		}
		rec.entries = append(rec.entries, e)
	}
	if next != nil && next != s.base {
		base := s.baseFiles()
		add := func(p string) {
			if inChanges[p] || base[p] == nextFiles[p] || s.scan.virtual[p] {
				return // a path L ignores is never written: nothing to roll
			}
			inChanges[p] = true
			cur := s.scan.files[p]
			rec.entries = append(rec.entries, rewriteEntry{path: p, before: cur, after: cur, next: nextFiles[p]})
		}
		for p := range nextFiles {
			add(p)
		}
		for p := range base {
			add(p)
		}
	}
	return rec
}

// rollForward applies the record the recovery flag names to s.base (in
// memory): see the comment at the top of this file. The scan of L must be
// current.
func (s *session) rollForward(flag *recoveryFlag) {
	// Applied once per record: a resynchronisation inside this session
	// after its own rewrite failed meets a newer record and applies it too
	// (on top of the older one, which it carries as its overlay).
	if flag == nil || flag.Rewrite == "" || flag.Rewrite == s.rolledFrom {
		return
	}
	s.rolledFrom = flag.Rewrite
	rec, err := s.state.loadRewrite(flag.Rewrite)
	if err != nil {
		s.e.log.Warn("rewrite record unreadable; resynchronising against the baseline", "err", err)
		return
	}
	if rec == nil || rec.baseHead != s.baseHead() {
		return // none, or the baseline already records the rewrite's result
	}
	files := make(map[string]cas.ID, len(s.baseFiles())+len(rec.entries))
	for p, id := range s.baseFiles() {
		files[p] = id
	}
	rolled := map[string]cas.ID{}
	set := func(p string, id cas.ID) {
		if id.IsZero() {
			delete(files, p)
		} else {
			files[p] = id
		}
		rolled[p] = id
	}
	for p, id := range rec.overlay {
		set(p, id)
	}
	reached := 0
	s.editedSince = nil
	for _, e := range rec.entries {
		cur, inL := s.scan.files[e.path]
		if inL && !e.after.IsZero() && cur != e.after && cur != e.before {
			// Edited since: on top of what the rewrite wrote, or of what
			// L held before? Decided once the contents can be read
			// (rollEditedForward).
			s.editedSince = append(s.editedSince, e)
			continue
		}
		if inL != !e.after.IsZero() || (inL && cur != e.after) {
			continue // not reached: the old base stays
		}
		set(e.path, e.next)
		reached++
	}
	s.e.log.Info("resynchronising from the interrupted rewrite's record", "paths", len(rec.entries), "reached", reached, "edited", len(s.editedSince))
	s.applyRolled(files, rolled)
}

// applyRolled makes files (s.base's entries with rolled applied) the merge
// base, marked non-exact at every rolled path, and records rolled for the
// next rewrite record's overlay.
func (s *session) applyRolled(files, rolled map[string]cas.ID) {
	if len(rolled) == 0 {
		return
	}
	held := map[string]cas.ID{}
	head := map[string]cas.ID{}
	if s.base != nil {
		head = s.base.headFiles()
		for p, id := range s.base.Held {
			held[p] = id
		}
	}
	for p := range rolled {
		if _, ok := held[p]; !ok {
			held[p] = head[p]
		}
	}
	b := &baseline{Held: held, Files: files}
	if s.base != nil {
		b.Generation, b.Head = s.base.Generation, s.base.Head
	}
	s.base = b
	s.rolled = rolled
}

// rollEditedForward decides, for each path the caller edited after the
// interrupted rewrite (rollForward's editedSince), whether the edit was
// made on top of what the rewrite wrote: then L holds the rewrite's change
// as well as the edit, and the path's base rolls forward like a reached
// one — otherwise merging against A would count the rewrite's lines (the
// other writers') as the caller's and conflict with their next edit beside
// them. The test: merging the rewrite's change (before → after) into L
// changes nothing, cleanly. An edit on top of the old content fails it
// (the rewrite's change is missing from L), and so does one too close to
// the rewrite's lines to tell; both keep A, at worst a conflict, never a
// loss. A content that cannot be read (L's own unpublished "before")
// keeps A too. It needs s.src (contents of the merge base and of R).
func (s *session) rollEditedForward() {
	if len(s.editedSince) == 0 {
		return
	}
	edited := s.editedSince
	s.editedSince = nil
	files := make(map[string]cas.ID, len(s.baseFiles()))
	for p, id := range s.baseFiles() {
		files[p] = id
	}
	rolled := map[string]cas.ID{}
	for p, id := range s.rolled {
		rolled[p] = id
	}
	n := 0
	for _, e := range edited {
		if !s.holdsRewrite(e) {
			continue
		}
		if e.next.IsZero() {
			delete(files, e.path)
		} else {
			files[e.path] = e.next
		}
		rolled[e.path] = e.next
		n++
	}
	if n == 0 {
		return
	}
	s.e.log.Info("paths edited after the interrupted rewrite hold its change; their base rolls forward", "paths", n)
	s.applyRolled(files, rolled)
}

// holdsRewrite reports whether L's current content at e.path already
// holds the rewrite's change from e.before to e.after.
func (s *session) holdsRewrite(e rewriteEntry) bool {
	s.probing = true
	defer func() { s.probing = false }()
	cur := s.scan.files[e.path]
	now, err := s.load(cur)
	if err != nil {
		return false
	}
	after, err := s.load(e.after)
	if err != nil {
		return false
	}
	var before []byte
	if !e.before.IsZero() {
		if before, err = s.load(e.before); err != nil {
			return false
		}
	}
	r := merge.Text(before, now, after)
	return len(r.Conflicts) == 0 && bytes.Equal(r.Content, now)
}
