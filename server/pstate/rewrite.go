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
//   - the next baseline, complete, in P/baseline.next: the base of every
//     path once the rewrite is done;
//   - the rewrite record, P/rewrite-<checksum>, named by the recovery flag:
//     for every path the rewrite changes, L's file before and after, and
//     the path's base while L still holds "before" (A's entry, or, for a
//     commit the store accepted, the published local content itself).
//
// The engine settles a record into one baseline, path by path, from what
// L holds (server/rewrite's record.go); this package keeps the two files.
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

// SaveRewrite writes the record (fsynced; the recovery flag written next
// in the same directory makes the rename durable) and returns its
// checksum, which the flag names. Each record is a file of its own,
// rewrite-<checksum>: a crash after the record and before the new flag
// leaves the old flag naming the old record, which is still there.
func (d Dir) SaveRewrite(r *RewriteRecord) (string, error) {
	data := encodeRewrite(r)
	sum := hex.EncodeToString(data[len(data)-32:])
	if err := osfile.WriteFile(d.File(rewritePrefix+sum), 0o600, true, data); err != nil {
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

// RemoveRewrite removes every rewrite record and the next baseline (the
// flag naming them is gone).
func (d Dir) RemoveRewrite() {
	names, _ := filepath.Glob(filepath.Join(d.Path, rewritePrefix+"*"))
	for _, n := range names {
		crashpoint.Hit(cpRemoveState, filepath.Base(n))
		os.Remove(n)
	}
	crashpoint.Hit(cpRemoveState, nextBaselineFile)
	os.Remove(d.File(nextBaselineFile))
}

// SaveNextBaseline writes next durably to P/baseline.next and returns its
// checksum and bytes. The commit's prepared baseline p is reused when it
// holds next.
func (d Dir) SaveNextBaseline(next *Baseline, p *Prepared) ([32]byte, []byte, error) {
	var data []byte
	if p != nil && p.Wait() == nil && p.Matches(next) {
		data = p.data
	} else {
		data = encodeBaseline(next)
	}
	var sum [32]byte
	copy(sum[:], data[len(data)-32:])
	return sum, data, osfile.WriteFile(d.File(nextBaselineFile), 0o600, true, data)
}

// KeepNextBaseline writes data, the bytes of the next baseline, back to
// P/baseline.next, durably: settling that replaces an installed next
// baseline keeps it where the record finds it first.
func (d Dir) KeepNextBaseline(data []byte) error {
	return osfile.WriteFile(d.File(nextBaselineFile), 0o600, true, data)
}

// InstallNextBaseline makes P/baseline.next the baseline (rename, then
// fsync of P's directory).
func (d Dir) InstallNextBaseline() error {
	crashpoint.Hit(cpInstallBaseline, nextBaselineFile)
	if err := os.Rename(d.File(nextBaselineFile), d.File(baselineFile)); err != nil {
		return err
	}
	return osfile.SyncDir(d.Path)
}

// LoadNextBaseline returns the next baseline the record names by its
// checksum sum: the file written before the rewrite or, once installed,
// the baseline itself (installed reports which), with its bytes.
func (d Dir) LoadNextBaseline(sum [32]byte) (b *Baseline, data []byte, installed bool) {
	for _, name := range []string{nextBaselineFile, baselineFile} {
		data, err := os.ReadFile(d.File(name))
		if err != nil || len(data) < 32 || !bytes.Equal(data[len(data)-32:], sum[:]) {
			continue
		}
		if b, err := DecodeBaseline(data); err == nil {
			return b, data, name == baselineFile
		}
	}
	return nil, nil, false
}
