package pstate

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/crashpoint"
	"github.com/slivingdoc/slivingdoc/internal/osfile"
	"github.com/slivingdoc/slivingdoc/server/workdir"
)

// Crash points (internal/crashpoint) of the records' effects that do not
// go through internal/osfile's WriteFile: a prepared or next baseline's
// rename into place, and the removal of a recovery flag, pending record,
// rewrite record or next baseline. The points of L's rewrite are
// server/workdir's, those of the store's requests the backend's, those of
// every other write osfile's.
var (
	cpInstallBaseline = crashpoint.Register("state.install-baseline")
	cpRemoveState     = crashpoint.Register("state.remove")
)

// Dir is the private state of one visible directory L: the records in
// P/dirs/<hash>. Every record is read and written only under the
// directory's Lock.
type Dir struct {
	Path  string // P/dirs/<hash>
	L     string // L (resolved), recorded in "where" beside the first baseline
	Store string // the engine's store key, recorded in "where"
}

// DirPath is P/dirs/<hash> of the directory dir, whose resolved path is
// real, for the store whose identity is identity: keyed by the resolved
// path (symlinks resolved), so a symlink alias and the real path share
// one baseline and one lock. Records kept under the path as given (before
// paths were resolved) are still found there.
func DirPath(private, identity, dir, real string) string {
	key := func(p string) string {
		return filepath.Join(private, "dirs", HashKey(identity+"\x00"+p))
	}
	resolved := key(real)
	if lexical := key(dir); lexical != resolved {
		if _, err := os.Stat(resolved); err != nil {
			if _, err := os.Stat(filepath.Join(lexical, baselineFile)); err == nil {
				return lexical
			}
		}
	}
	return resolved
}

// File names a record of the directory.
func (d Dir) File(name string) string { return filepath.Join(d.Path, name) }

// Where is P/dirs/<h>/where: which L (and store) this state belongs
// to. It is written before the first baseline, so its presence tells a
// lost baseline from a directory never pulled, and it lets a new notebook
// directory find the existing ones it would contain.
type Where struct {
	Dir   string `json:"dir"`
	Store string `json:"store"`
}

// Where returns the directory's "where" record, and whether it has a
// readable one.
func (d Dir) Where() (Where, bool) {
	data, err := os.ReadFile(d.File("where"))
	if err != nil {
		return Where{}, false
	}
	var w Where
	if json.Unmarshal(data, &w) != nil {
		return Where{}, false
	}
	return w, true
}

// PulledBefore reports whether the directory's records were ever
// started (its "where" record is there).
func (d Dir) PulledBefore() bool {
	_, err := os.Stat(d.File("where"))
	return err == nil
}

// RecordWhere writes the "where" record, once.
func (d Dir) RecordWhere() error {
	if d.L == "" || d.PulledBefore() {
		return nil
	}
	data, _ := json.Marshal(Where{Dir: d.L, Store: d.Store})
	return WriteAtomic(d.File("where"), data)
}

// SaveHeld keeps the content of a held base (idempotent: the name is its
// file ID), durable before the baseline naming it is recorded.
func (d Dir) SaveHeld(id cas.ID, content []byte) error {
	name := filepath.Join(d.Path, "held", hex.EncodeToString(id[:]))
	if _, err := os.Stat(name); err == nil {
		return nil
	}
	return WriteAtomic(name, content)
}

// LoadHeld returns a held base's content, checked against its ID.
func (d Dir) LoadHeld(id cas.ID) ([]byte, bool) {
	c, err := os.ReadFile(filepath.Join(d.Path, "held", hex.EncodeToString(id[:])))
	if err != nil {
		return nil, false
	}
	if got, err := cas.WriteFile(nil, c); err != nil || got != id {
		return nil, false
	}
	return c, true
}

// PruneHeld removes the held contents b no longer names.
func (d Dir) PruneHeld(b *Baseline) {
	dir := filepath.Join(d.Path, "held")
	names, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	keep := map[string]bool{}
	if b != nil && !b.Exact() {
		files := b.Tree()
		for p := range b.Held {
			if id, ok := files[p]; ok {
				keep[hex.EncodeToString(id[:])] = true
			}
		}
	}
	for _, n := range names {
		if !keep[n.Name()] {
			os.Remove(filepath.Join(dir, n.Name()))
		}
	}
}

// statCacheMagic: SLDSTAT1 caches hold marker flags computed by a scan
// that missed nested blocks; they are dropped (every file is read once
// more) rather than trusted.
const statCacheMagic = "SLDSTAT2"

// The stat cache: a workdir.Entry per file of L, the stat fields that
// change when the file is written, the file ID of the content read at
// that stat, and whether the entry may be trusted (its mtime was older
// than the scan that recorded it, see workdir's scan.go).
//
// The entries are written in increasing path order (workdir.StatCache's
// layout), so that a scan searches them in place, as git searches its
// index, instead of decoding 10,000 entries into a map on every call. A
// file an earlier version wrote in map order is still read (into a map)
// and rewritten in order by the next save.
func encodeStatCache(m *workdir.StatCache) []byte {
	b := make([]byte, 0, len(statCacheMagic)+4+m.Len()*(40+75)+32)
	b = append(b, statCacheMagic...)
	b = binary.BigEndian.AppendUint32(b, uint32(m.Len()))
	b = m.AppendEntries(b)
	sum := cas.Sum(b)
	return append(b, sum[:]...)
}

func decodeStatCache(data []byte) (*workdir.StatCache, error) {
	r, err := newReader(data, statCacheMagic)
	if err != nil {
		return nil, err
	}
	n := int(r.u32())
	if !r.ok() {
		return nil, ErrCorrupt
	}
	m, err := workdir.DecodeStatCache(r.b, n)
	if err != nil {
		return nil, ErrCorrupt
	}
	return m, nil
}

// StatCacheFile is the stat cache's file in a directory's records.
const StatCacheFile = "statcache"

// LoadStatCache returns an empty cache when there is none or it is
// unreadable: the cache only saves reads, it never decides content.
func (d Dir) LoadStatCache() *workdir.StatCache {
	data, err := os.ReadFile(d.File(StatCacheFile))
	if err != nil {
		return workdir.NewStatCache()
	}
	m, err := decodeStatCache(data)
	if err != nil {
		return workdir.NewStatCache()
	}
	return m
}

// SaveStatCache records m. A commit that changed files but no path
// leaves the cache's length as it was: the file is then overwritten in
// place (osfile.Overwrite) rather than replaced through a new one, which
// costs about 150 µs of CPU on an ext4 disk that frees inodes often. A
// write met half done or cut by a crash fails the cache's checksum, and
// an unreadable cache is an empty one (LoadStatCache).
func (d Dir) SaveStatCache(m *workdir.StatCache) error {
	return Overwrite(d.File(StatCacheFile), encodeStatCache(m))
}

// RecoveryFlag is recorded before L is rewritten and removed once L and
// the baseline are durable. Its presence makes the next call resynchronise.
type RecoveryFlag struct {
	Op             string `json:"op"`
	Stage          string `json:"stage"`
	RemoteAccepted string `json:"remoteAccepted"`
	Generation     uint64 `json:"generation"`
	// Rewrite is the checksum of the rewrite record (RewriteRecord)
	// describing the rewrite of L this flag covers; empty: none.
	Rewrite string `json:"rewrite,omitempty"`
}

// LoadRecovery returns the recovery flag (nil: none). A flag present but
// unreadable still requires recovery.
func (d Dir) LoadRecovery() (*RecoveryFlag, error) {
	data, err := os.ReadFile(d.File("recovery"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var f RecoveryFlag
	if json.Unmarshal(data, &f) != nil {
		// Unreadable but present: recovery is still required.
		return &RecoveryFlag{Stage: "unknown", RemoteAccepted: "unknown"}, nil
	}
	return &f, nil
}

// recoverySpare is the file the recovery flag is written through and
// cleared into (see rewrite.go's Spares): never read, so that a rewrite
// sets and clears its flag without creating or freeing a file.
const recoverySpare = ".recovery.spare"

// SetRecovery records f, durably: written over the spare, fsynced, and
// exchanged with (or renamed to) the flag, so the flag is always whole.
func (d Dir) SetRecovery(f RecoveryFlag) error {
	data, _ := json.Marshal(f)
	if err := os.MkdirAll(d.Path, 0o700); err != nil {
		return err
	}
	return osfile.WriteSpare(d.File("recovery"), d.File(recoverySpare), 0o600, true, data)
}

// ClearRecovery removes the flag, durably (none is fine), by renaming it
// to the spare, which the next SetRecovery writes over.
func (d Dir) ClearRecovery() error {
	crashpoint.Hit(cpRemoveState, "recovery")
	err := os.Rename(d.File("recovery"), d.File(recoverySpare))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return osfile.SyncDir(d.Path)
}
