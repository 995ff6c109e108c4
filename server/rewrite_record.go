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
	"github.com/slivingdoc/slivingdoc/internal/osfile"
	"github.com/slivingdoc/slivingdoc/merge"
)

// The rewrite record (docs/local-state.md, invariants L1–L6).
//
// A rewrite of L changes, for each path it writes or removes, two things
// that must agree: the file in L and its merge base in A. The file is
// replaced atomically (rename), but the two cannot change together, so
// before L is touched P holds, durably:
//
//   - the next baseline, complete, in P/baseline.next: the base of every
//     path once the rewrite is done;
//   - the rewrite record, P/rewrite-<checksum>, named by the recovery flag:
//     for every path the rewrite changes, L's file before and after, and
//     the path's base while L still holds "before" (A's entry, or, for a
//     commit the store accepted, the published local content itself).
//
// Settling (settleRewrite) turns that into one baseline, path by path,
// from what L holds: "after" takes the next baseline's base, "before" the
// recorded one. A path the caller edited after the crash holds neither;
// its content tells which one it was edited from when exactly one of the
// two readings explains it (whichVersion); otherwise its base is unknown
// and the next merge keeps both texts in one conflict block (unknown.go),
// never a guess. The settled baseline is recorded durably before anything
// else happens, so a second crash starts from it and never from state
// kept in memory: records do not compose, they are settled one at a time.
//
// Encoding (integers big-endian, paths as u16 length + bytes, IDs 32
// bytes; zero ID: absent):
//
//	"SLDRWRT2"
//	next baseline's checksum (its file's last 32 bytes)
//	u32 m, m × (path, before, after, baseBefore)
//	BLAKE3 of everything before
//
// An "SLDRWRT1" record (written by earlier versions) is not read: the
// paths it covered then count as edited with an unknown base, so the worst
// case is a conflict block that keeps both texts.
const rewriteMagic = "SLDRWRT2"

// nextBaselineFile names the next baseline written before a rewrite.
const nextBaselineFile = "baseline.next"

// rewriteEntry is one path of a rewrite record (zero ID: absent).
type rewriteEntry struct {
	path          string
	before, after cas.ID
	baseBefore    cas.ID
}

type rewriteRecord struct {
	nextSum [32]byte
	entries []rewriteEntry
}

func encodeRewrite(r *rewriteRecord) []byte {
	b := make([]byte, 0, len(rewriteMagic)+36+len(r.entries)*(2+40+96)+32)
	b = append(b, rewriteMagic...)
	b = append(b, r.nextSum[:]...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(r.entries)))
	for _, e := range r.entries {
		b = binary.BigEndian.AppendUint16(b, uint16(len(e.path)))
		b = append(b, e.path...)
		b = append(b, e.before[:]...)
		b = append(b, e.after[:]...)
		b = append(b, e.baseBefore[:]...)
	}
	sum := cas.Sum(b)
	return append(b, sum[:]...)
}

func decodeRewrite(data []byte) (*rewriteRecord, error) {
	r, err := newStateReader(data, rewriteMagic)
	if err != nil {
		return nil, err
	}
	rec := &rewriteRecord{}
	copy(rec.nextSum[:], r.bytes(32))
	m := int(r.u32())
	if m > len(data)/98 {
		return nil, errBadStateFile
	}
	for i := 0; i < m && r.ok(); i++ {
		e := rewriteEntry{path: string(r.bytes(int(r.u16())))}
		copy(e.before[:], r.bytes(32))
		copy(e.after[:], r.bytes(32))
		copy(e.baseBefore[:], r.bytes(32))
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
// rewrite-<checksum>: a crash after the record and before the new flag
// leaves the old flag naming the old record, which is still there.
func (d dirState) saveRewrite(r *rewriteRecord) (string, error) {
	data := encodeRewrite(r)
	sum := hex.EncodeToString(data[len(data)-32:])
	if err := osfile.WriteFile(d.file(rewritePrefix+sum), 0o600, true, data); err != nil {
		return "", err
	}
	return sum, nil
}

const rewritePrefix = "rewrite-"

// loadRewrite returns the record the flag names; nil if there is none, it
// is unreadable, or it was written by an earlier version (see above).
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
	rec, err := decodeRewrite(data)
	if err != nil {
		return nil, nil
	}
	return rec, nil
}

// removeRewrite removes every rewrite record and the next baseline (the
// flag naming them is gone).
func (d dirState) removeRewrite() {
	names, _ := filepath.Glob(filepath.Join(d.path, rewritePrefix+"*"))
	for _, n := range names {
		crashpoint.Hit(cpRemoveState, filepath.Base(n))
		os.Remove(n)
	}
	crashpoint.Hit(cpRemoveState, nextBaselineFile)
	os.Remove(d.file(nextBaselineFile))
}

// saveNextBaseline writes next durably to P/baseline.next and returns its
// checksum. The commit's prepared baseline is reused when it is next.
func (d dirState) saveNextBaseline(next *baseline) ([32]byte, []byte, error) {
	var data []byte
	if p := next.prepared; p != nil && p.wait() == nil && p.matches(next) {
		data = p.data
	} else {
		data = encodeBaseline(next)
	}
	var sum [32]byte
	copy(sum[:], data[len(data)-32:])
	return sum, data, osfile.WriteFile(d.file(nextBaselineFile), 0o600, true, data)
}

// installNextBaseline makes P/baseline.next the baseline (rename, then
// fsync of P's directory).
func (d dirState) installNextBaseline(next *baseline, data []byte) error {
	d.kept.forgetBaseline()
	crashpoint.Hit(cpInstallBaseline, nextBaselineFile)
	if err := os.Rename(d.file(nextBaselineFile), d.file("baseline")); err != nil {
		return err
	}
	if err := osfile.SyncDir(d.path); err != nil {
		return err
	}
	if f, err := os.Open(d.file("baseline")); err == nil {
		next.kept = d.kept.keepBaseline(f, data, next)
		f.Close()
	}
	return nil
}

// loadNextBaseline returns the next baseline the record names: the file
// written before the rewrite or, once installed, the baseline itself
// (installed reports which), with its bytes.
func (d dirState) loadNextBaseline(sum [32]byte) (b *baseline, data []byte, installed bool) {
	for _, name := range []string{nextBaselineFile, "baseline"} {
		data, err := os.ReadFile(d.file(name))
		if err != nil || len(data) < 32 || !bytes.Equal(data[len(data)-32:], sum[:]) {
			continue
		}
		if b, err := decodeBaseline(data); err == nil {
			return b, data, name == "baseline"
		}
	}
	return nil, nil, false
}

// rewriteRecordFor describes the rewrite of changes towards next, with
// baseBefore the base of each path while L holds its old file.
func rewriteRecordFor(changes []change, scanned, baseBefore map[string]cas.ID, nextSum [32]byte) *rewriteRecord {
	rec := &rewriteRecord{nextSum: nextSum}
	for _, c := range changes {
		e := rewriteEntry{path: c.path, before: scanned[c.path], baseBefore: baseBefore[c.path]}
		if !c.del {
			e.after = c.id
		}
		rec.entries = append(rec.entries, e)
	}
	return rec
}

// keepRewriteContents saves in P (held/) the contents settling may need
// and may find in no pack: L's old content and the base recorded for it
// wherever they are not the accepted file of A's head (a local edit, the
// published local text of an accepted commit, a held base), and the new
// content where it is no file of the next head (a text merge's result).
// Such paths are few; the common rewrite (others' changes into files L did
// not edit) saves nothing.
func (s *session) keepRewriteContents(changes []change, baseBefore, next map[string]cas.ID) error {
	var head map[string]cas.ID
	if s.base != nil {
		head = s.base.headFiles()
	}
	for _, c := range changes {
		if id := s.scan.files[c.path]; c.old != nil && id != head[c.path] {
			if err := s.state.saveHeld(id, c.old); err != nil {
				return err
			}
		}
		if bb := baseBefore[c.path]; !bb.IsZero() && bb != unknownBase && bb != head[c.path] && bb != s.scan.files[c.path] {
			content, err := s.load(bb)
			if err != nil {
				return err
			}
			if err := s.state.saveHeld(bb, content); err != nil {
				return err
			}
		}
		if !c.del && c.id != next[c.path] {
			if err := s.state.saveHeld(c.id, c.content); err != nil {
				return err
			}
		}
	}
	return nil
}

// settleRewrite resolves the rewrite the recovery flag names into a
// baseline and records it (durable: the record and the flag are removed
// after it), or, when durable is false (status), only applies it to s.base.
// The scan of L must be current. It reports whether there was a record.
func (s *session) settleRewrite(flag *recoveryFlag, durable bool) (bool, error) {
	if flag == nil || s.base == nil {
		return false, nil
	}
	rec, err := s.state.loadRewrite(flag.Rewrite)
	if err != nil {
		return false, err
	}
	var next *baseline
	var nextData []byte
	installed := false
	if rec != nil {
		next, nextData, installed = s.state.loadNextBaseline(rec.nextSum)
	}
	var settled *baseline
	switch {
	case rec == nil:
		// No record: the rewrite never started (the flag was set by a
		// failure before it: L holds what the baseline describes), or
		// its record is one this version does not read (an earlier
		// version's): any path where L differs from the baseline may be
		// that rewrite's, so its base is unknown.
		if flag.Rewrite == "" {
			settled = s.base
			break
		}
		settled = s.unknownWhereChanged()
	case next == nil:
		// The record without its next baseline (a damaged P): every path
		// it covers has an unknown base.
		settled = s.unknownAt(rec.entries)
	default:
		settled = s.settleAgainst(rec, next)
	}
	if !durable {
		s.base = settled
		return true, nil
	}
	switch {
	case settled == next && installed:
		// The baseline is next already: nothing to record.
		s.base = settled
	case settled == next:
		if err := s.state.installNextBaseline(next, nextData); err != nil {
			return true, err
		}
		s.base = settled
	case settled != s.base || settled.Generation != s.base.Generation:
		if installed {
			// The settled baseline replaces the installed next one:
			// keep next where the record finds it first, so that settling
			// again after a crash from here on gives the same result.
			if err := osfile.WriteFile(s.state.file(nextBaselineFile), 0o600, true, nextData); err != nil {
				return true, err
			}
		}
		if err := s.state.saveBaseline(settled); err != nil {
			return true, err
		}
		s.base = settled
	}
	if err := s.state.clearRecovery(); err != nil {
		return true, err
	}
	s.state.removeRewrite()
	s.state.pruneHeld(s.base)
	s.removeTemps()
	return true, nil
}

// settleAgainst is next, with each path the rewrite did not (provably)
// reach given the base L's file was made from.
func (s *session) settleAgainst(rec *rewriteRecord, next *baseline) *baseline {
	head := next.headFiles()
	files := make(map[string]cas.ID, len(next.files()))
	for p, id := range next.files() {
		files[p] = id
	}
	held := map[string]cas.ID{}
	for p, id := range next.Held {
		held[p] = id
	}
	changed := 0
	for _, e := range rec.entries {
		var base cas.ID
		switch cur := s.scan.files[e.path]; {
		case s.scan.virtual[e.path]:
			continue // never written: L ignores it
		case cur == e.after:
			continue // reached, or never needed: next's base
		case cur == e.before:
			base = e.baseBefore
		default:
			switch s.whichVersion(e, cur) {
			case versionBefore:
				base = e.baseBefore
			case versionAfter:
				continue
			default:
				base = unknownBase
			}
		}
		if base == files[e.path] {
			continue
		}
		changed++
		if base.IsZero() {
			delete(files, e.path)
		} else {
			files[e.path] = base
		}
		if _, ok := held[e.path]; !ok {
			held[e.path] = head[e.path]
		}
	}
	s.e.log.Info("settled an interrupted rewrite", "paths", len(rec.entries), "unreached", changed)
	if changed == 0 {
		return next
	}
	return &baseline{Generation: next.Generation, Head: next.Head, Files: files, Held: held}
}

// unknownAt is s.base with an unknown base at every path of entries.
func (s *session) unknownAt(entries []rewriteEntry) *baseline {
	paths := make([]string, 0, len(entries))
	for _, e := range entries {
		paths = append(paths, e.path)
	}
	return s.base.withUnknown(paths)
}

// unknownWhereChanged is s.base with an unknown base at every path where L
// differs from it (an unreadable record: any of them may be the tool's).
func (s *session) unknownWhereChanged() *baseline {
	changes, _ := s.base.delta(s.scan.files)
	var paths []string
	for p := range changes {
		if !s.scan.virtual[p] {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		return s.base
	}
	return s.base.withUnknown(paths)
}

type version int

const (
	versionUnknown version = iota
	versionBefore
	versionAfter
)

// whichVersion tells which of the rewrite's two files of e.path the
// caller's edit (cur) was made from: "after" if cur holds the rewrite's
// change (merging before → after into cur changes nothing) and "before"
// if cur lacks it (merging the reverse change changes nothing), when
// exactly one of the two holds; otherwise the version cur differs less
// from. Equal differences, or a content that cannot be read: unknown.
func (s *session) whichVersion(e rewriteEntry, cur cas.ID) version {
	if cur.IsZero() || e.before.IsZero() || e.after.IsZero() {
		return versionUnknown // a removal either way: nothing to compare
	}
	now, err1 := s.loadForSettle(cur)
	before, err2 := s.loadForSettle(e.before)
	after, err3 := s.loadForSettle(e.after)
	if err1 != nil || err2 != nil || err3 != nil {
		return versionUnknown
	}
	holds := func(from, to []byte) bool {
		r := merge.Text(from, now, to)
		return len(r.Conflicts) == 0 && bytes.Equal(r.Content, now)
	}
	fromAfter, fromBefore := holds(before, after), holds(after, before)
	switch {
	case fromAfter && !fromBefore:
		return versionAfter
	case fromBefore && !fromAfter:
		return versionBefore
	}
	// Neither (or both) readings merge cleanly: typically the caller's
	// edit touches the lines the rewrite changed (both appended at the
	// end of a log). The version the edit is smaller against made it: an
	// edit of "before" read against "after" also undoes the rewrite's
	// change, and the other way round. Equal sizes cannot be told apart.
	ib, db := merge.Stat(before, now)
	ia, da := merge.Stat(after, now)
	switch fromBefore, fromAfter := ib+db, ia+da; {
	case fromBefore < fromAfter:
		return versionBefore
	case fromAfter < fromBefore:
		return versionAfter
	}
	return versionUnknown
}

// loadForSettle reads a content settling needs: from P's held contents
// (kept before the rewrite) or, once the chain is synced (s.src), from
// wherever s.load finds it. Nothing is fetched for it: what cannot be read
// leaves the path's version unknown.
func (s *session) loadForSettle(id cas.ID) ([]byte, error) {
	if c, ok := s.state.loadHeld(id); ok {
		return c, nil
	}
	if s.src == nil {
		return nil, cas.ErrNotFound
	}
	s.probing = true
	defer func() { s.probing = false }()
	return s.load(id)
}

// removeTemps removes the temporary files an interrupted rewrite left in L.
func (s *session) removeTemps() {
	if s.scan == nil || s.root == nil {
		return
	}
	for _, t := range s.scan.temps {
		if err := s.root.Remove(t); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.e.log.Warn("cannot remove a temporary file of an interrupted rewrite", "err", err)
		}
	}
	s.scan.temps = nil
}
