package pstate

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
)

// The rewrite record (docs/local-state.md, invariants L1–L6).
//
// A rewrite of L changes, for each path it writes or removes, two things
// that must agree: the file in L and its merge base in A. The file is
// replaced atomically (rename), but the two cannot change together, so
// before L is touched P holds, durably:
//
//   - the next baseline, complete, in P/.baseline.next.spare: the base of
//     every path once the rewrite is done;
//   - the rewrite record, P/rewrite-<checksum>, named by the recovery flag:
//     for every path the rewrite changes, L's file before and after, and
//     the path's base while L still holds "before" (A's entry, or, for a
//     commit the store accepted, the published local content itself).
//
// The engine settles a record into one baseline, path by path, from what
// L holds (server/rewrite's record.go); this package keeps the two files.
//
// Spares. A rewrite creates none of its three files (next baseline,
// record, flag) once a directory has made one rewrite, and frees none:
// each is written over a spare that no reader reads, and given up into it
// again (a file create costs 0.2–0.7 ms of CPU on an ext4 disk that frees
// inodes often, an overwrite a few µs).
//   - The next baseline is written over .baseline.next.spare in place
//     (osfile.WriteOver, fsynced) and installed by exchanging that file
//     with the baseline (osfile.Exchange), so the spare then holds the
//     baseline before, for the next rewrite to write over. It is found by
//     the checksum the record names, never by its name: a baseline ends
//     in the BLAKE3 of its bytes, so the spare is taken only when it holds
//     exactly the bytes named, never when it holds an older baseline or
//     one torn by a crash while it was written.
//   - The record is written over .rewrite.spare, fsynced, and renamed to
//     rewrite-<checksum> (osfile.WriteSpare); removed, it is renamed back.
//     Only a name rewrite-<checksum> whose bytes end in that checksum is a
//     record, and a record only ever gets that name whole and fsynced: a
//     spare is never read, and a record met half written fails its
//     checksum and reads as none.
//   - The flag (dir.go) is written over .recovery.spare, fsynced, and
//     renamed to recovery; cleared, it is renamed back.
//
// A write through a spare exchanges it with its target when the target
// exists (the spare then holds the target's old bytes). Where the system
// cannot exchange two files, the spare is renamed over the target
// instead, and is made again by the next write.
//
// Earlier versions wrote the next baseline to P/baseline.next through a
// temporary file: a directory such a version left mid-rewrite (that
// file, a record and a flag) is settled as before, the next baseline
// found there first, installed by rename, and the file removed with the
// record.
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

// NextBaselineSpare is the file a rewrite's next baseline is written over
// (see Spares above); oldNextBaselineFile is where earlier versions wrote
// it, still read and removed.
const (
	NextBaselineSpare   = ".baseline.next.spare"
	oldNextBaselineFile = "baseline.next"
	rewriteSpare        = ".rewrite.spare"
)

// RewriteEntry is one path of a rewrite record (zero ID: absent).
type RewriteEntry struct {
	Path          string
	Before, After cas.ID
	BaseBefore    cas.ID
}

// RewriteRecord describes a rewrite of L: the next baseline's checksum
// and the paths it changes.
type RewriteRecord struct {
	NextSum [32]byte
	Entries []RewriteEntry
}

func encodeRewrite(r *RewriteRecord) []byte {
	b := make([]byte, 0, len(rewriteMagic)+36+len(r.Entries)*(2+40+96)+32)
	b = append(b, rewriteMagic...)
	b = append(b, r.NextSum[:]...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(r.Entries)))
	for _, e := range r.Entries {
		b = binary.BigEndian.AppendUint16(b, uint16(len(e.Path)))
		b = append(b, e.Path...)
		b = append(b, e.Before[:]...)
		b = append(b, e.After[:]...)
		b = append(b, e.BaseBefore[:]...)
	}
	sum := cas.Sum(b)
	return append(b, sum[:]...)
}

func decodeRewrite(data []byte) (*RewriteRecord, error) {
	r, err := newReader(data, rewriteMagic)
	if err != nil {
		return nil, err
	}
	rec := &RewriteRecord{}
	copy(rec.NextSum[:], r.bytes(32))
	m := int(r.u32())
	if m > len(data)/98 {
		return nil, ErrCorrupt
	}
	for i := 0; i < m && r.ok(); i++ {
		e := RewriteEntry{Path: string(r.bytes(int(r.u16())))}
		copy(e.Before[:], r.bytes(32))
		copy(e.After[:], r.bytes(32))
		copy(e.BaseBefore[:], r.bytes(32))
		rec.Entries = append(rec.Entries, e)
	}
	if !r.done() {
		return nil, ErrCorrupt
	}
	return rec, nil
}

// SaveRewrite writes the record (fsynced, and P's directory after its
// rename, which also makes the next baseline's spare durable if it was
// made just now) and returns its checksum, which the flag names. Each
// record is a file of its own, rewrite-<checksum>: a crash after the
// record and before the new flag leaves the old flag naming the old
// record, which is still there. It is written over the record spare
// (osfile.WriteSpare): no file is created once the spare exists.
func (d Dir) SaveRewrite(r *RewriteRecord) (string, error) {
	data := encodeRewrite(r)
	sum := hex.EncodeToString(data[len(data)-32:])
	if err := osfile.WriteSpare(d.File(rewritePrefix+sum), d.File(rewriteSpare), 0o600, true, data); err != nil {
		return "", err
	}
	return sum, nil
}

const rewritePrefix = "rewrite-"

// LoadRewrite returns the record the flag names; nil if there is none, it
// is unreadable, or it was written by an earlier version (see above).
func (d Dir) LoadRewrite(sum string) (*RewriteRecord, error) {
	if sum == "" {
		return nil, nil
	}
	if len(sum) != 64 || strings.Trim(sum, "0123456789abcdef") != "" {
		return nil, nil // not a checksum this version wrote
	}
	data, err := os.ReadFile(d.File(rewritePrefix + sum))
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

// RemoveRewrite removes every rewrite record (the flag naming them is
// gone): the first is renamed to the record spare, for the next rewrite
// to write over, the others (left by crashes) are deleted; and the next
// baseline an earlier version left in baseline.next. The next baseline's
// spare stays: it is no record until one names it.
func (d Dir) RemoveRewrite() {
	names, _ := filepath.Glob(filepath.Join(d.Path, rewritePrefix+"*"))
	for i, n := range names {
		crashpoint.Hit(cpRemoveState, filepath.Base(n))
		if i == 0 && os.Rename(n, d.File(rewriteSpare)) == nil {
			continue
		}
		os.Remove(n)
	}
	old := d.File(oldNextBaselineFile)
	if _, err := os.Lstat(old); err == nil {
		crashpoint.Hit(cpRemoveState, oldNextBaselineFile)
		os.Remove(old)
	}
}

// NextBaseline is a rewrite's next baseline as P keeps it: its checksum
// (which the record names), its bytes, and the file of P that holds it.
type NextBaseline struct {
	Sum  [32]byte
	Data []byte
	File string // NextBaselineSpare, or an earlier version's baseline.next
}

// SaveNextBaseline writes next durably over P/.baseline.next.spare (in
// place: no file is created once the spare exists; the directory entry of
// a spare made now is made durable by the record's write, which follows)
// and returns it. The commit's prepared baseline p supplies the bytes
// when it holds next.
func (d Dir) SaveNextBaseline(next *Baseline, p *Prepared) (NextBaseline, error) {
	var data []byte
	if p != nil && p.Wait() == nil && p.Matches(next) {
		data = p.data
	} else {
		data = encodeBaseline(next)
	}
	n := NextBaseline{Data: data, File: NextBaselineSpare}
	copy(n.Sum[:], data[len(data)-32:])
	return n, osfile.WriteOver(d.File(NextBaselineSpare), 0o600, true, data)
}

// KeepNextBaseline writes data, the bytes of the next baseline, back to
// its spare, durably: settling that replaces an installed next baseline
// keeps it where the record finds it (LoadNextBaseline).
func (d Dir) KeepNextBaseline(data []byte) error {
	if err := osfile.WriteOver(d.File(NextBaselineSpare), 0o600, true, data); err != nil {
		return err
	}
	return osfile.SyncDir(d.Path) // the spare may have been made now
}

// InstallNextBaseline makes the next baseline in file (NextBaseline.File)
// the baseline, then fsyncs P's directory. The spare is exchanged with the
// baseline, so that it then holds the baseline before (renamed over it
// where the system cannot exchange); an earlier version's baseline.next is
// renamed over it.
func (d Dir) InstallNextBaseline(file string) error {
	crashpoint.Hit(cpInstallBaseline, file)
	var err error
	if file == NextBaselineSpare {
		err = osfile.Exchange(d.File(file), d.File(baselineFile))
	} else {
		err = os.Rename(d.File(file), d.File(baselineFile))
	}
	if err != nil {
		return err
	}
	return osfile.SyncDir(d.Path)
}

// LoadNextBaseline returns the next baseline the record names by its
// checksum sum, and whether it is the baseline already (installed): an
// earlier version's baseline.next is looked at first, then the spare, then
// the baseline itself.
func (d Dir) LoadNextBaseline(sum [32]byte) (b *Baseline, n NextBaseline, installed bool) {
	for _, name := range []string{oldNextBaselineFile, NextBaselineSpare, baselineFile} {
		data, err := os.ReadFile(d.File(name))
		if err != nil || len(data) < 32 || !bytes.Equal(data[len(data)-32:], sum[:]) {
			continue
		}
		if b, err := DecodeBaseline(data); err == nil {
			return b, NextBaseline{Sum: sum, Data: data, File: name}, name == baselineFile
		}
	}
	return nil, NextBaseline{}, false
}
