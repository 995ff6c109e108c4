package server

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"unsafe"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/crashpoint"
	"github.com/slivingdoc/slivingdoc/internal/osfile"
	"github.com/slivingdoc/slivingdoc/server/pstate"
	"github.com/slivingdoc/slivingdoc/server/workdir"
)

// Private state (P) layout under Config.PrivateRoot:
//
//	stores/<hash(store identity)>/store-id              the store's ID, as last read, and its key (storeid.go)
//	stores/<key>/probe                                  cached probe verdict
//	stores/<key>/chains/<through>-<hash(chain)>/        object cache (cas.Store)
//	remotes/<hash(L)>                                   the store L belongs to (remembered.go)
//	dirs/<hash(store identity, L)>/lock                 cross-process lock
//	dirs/<hash(store identity, L)>/baseline             A: generation, head, path→file ID, held paths
//	dirs/<hash(store identity, L)>/.baseline.spare      the next A, written while a commit publishes (preparedBaseline); after it, the A before
//	dirs/<hash(store identity, L)>/baseline.next        the next A, durable, while L is rewritten (rewrite_record.go)
//	dirs/<hash(store identity, L)>/held/<file ID hex>   content of a held base (see baseline.Held), or one settling may need
//	dirs/<hash(store identity, L)>/rewrite-<checksum>   the rewrite in flight (rewrite_record.go)
//	dirs/<hash(store identity, L)>/saved/<time>/<path>  copies a forced restore or revert kept (history_restore.go)
//	dirs/<hash(store identity, L)>/statcache            stat → file ID of L's files
//	dirs/<hash(store identity, L)>/recovery             present = recoveryRequired
//	dirs/<hash(store identity, L)>/pending              publication in flight (pending.go)
//	dirs/<hash(store identity, L)>/.pending.spare       the file pending is written through and removed into (pending.go)
//
// Every file is written atomically (temp, fsync, rename, fsync dir; the
// caches, statcache and pending, without the fsyncs). The
// binary files end in the BLAKE3 of their preceding bytes, so a torn or
// foreign file is detected instead of trusted.

const (
	baselineMagic = "SLDBASE1"
	// baselineHeldMagic: a baseline with held paths; the held section
	// follows the entries. A baseline without held paths is still written
	// as SLDBASE1, byte for byte as before.
	baselineHeldMagic = "SLDBASE2"
	// statCacheMagic: SLDSTAT1 caches hold marker flags computed by a scan
	// that missed nested blocks; they are dropped (every file is read once
	// more) rather than trusted.
	statCacheMagic = "SLDSTAT2"
)

var errBadStateFile = errors.New("server: private state file is corrupt")

// storeDir is P/stores/<key> of the store as last identified (storeid.go).
func (e *Engine) storeDir() string { return filepath.Join(e.private, "stores", e.keyedNow().key) }

// stateDir is the private state of L = dir, keyed by dir's resolved
// identity (symlinks resolved), so a symlink alias and the real path share
// one baseline and one lock. State recorded under the path as given (before
// identities were resolved) is still found there.
func (e *Engine) stateDir(dir string) string { return e.stateDirOf(dir, realPath(dir)) }

// stateDirOf is stateDir of dir, whose resolved path is real.
func (e *Engine) stateDirOf(dir, real string) string {
	key := func(p string) string {
		return filepath.Join(e.private, "dirs", pstate.HashKey(e.store.Identity()+"\x00"+p))
	}
	resolved := key(real)
	if lexical := key(dir); lexical != resolved {
		if _, err := os.Stat(resolved); err != nil {
			if _, err := os.Stat(filepath.Join(lexical, "baseline")); err == nil {
				return lexical
			}
		}
	}
	return resolved
}

// baseline is A: the accepted state this directory was last synchronised
// to. Its files are the tree of an accepted head, except at held paths.
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
// P/dirs/<h>/held/, since a later checkpoint may drop it from the chain.
type baseline struct {
	Generation uint64
	Head       cas.ID
	Files      map[string]cas.ID // nil until files() decodes entries
	Held       map[string]cas.ID // held path → Head's ID there (zero: absent)

	entries []byte // verified, undecoded entries of a loaded baseline
	count   int

	// ignored is A's files at the paths the engine's ignore rules match,
	// when known (ignoredKnown): addVirtual's walk over every path of A,
	// done once per baseline a long-lived engine keeps (memory.go) rather
	// than on every call. kept is that memory (nil: none).
	ignored      []pathID
	ignoredKnown bool
	kept         *keptBaseline
	// prepared is this baseline already written to a durable temporary
	// file, while it was being published (nil: none): saving it is then
	// the rename and the directory's fsync.
	prepared *preparedBaseline
}

// pathID is one file of a tree.
type pathID struct {
	path string
	id   cas.ID
}

// exact reports whether the merge base is exactly Head's tree, so the fast
// paths that compare heads may skip the merge.
func (b *baseline) exact() bool { return b == nil || len(b.Held) == 0 }

// headFiles is Head's tree (files() with the held paths put back).
func (b *baseline) headFiles() map[string]cas.ID {
	files := b.files()
	if b.exact() {
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

// files returns A's tree, decoding it on first use: a no-op pull needs
// only the head, and 10,000 entries are worth not decoding.
func (b *baseline) files() map[string]cas.ID {
	if b.Files != nil {
		return b.Files
	}
	b.Files = make(map[string]cas.ID, b.count)
	// One string holds every path (as in decodeStatCache): decoding does
	// not allocate 10,000 strings.
	all := frozenString(b.entries)
	r := &stateReader{b: b.entries}
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

// sameFiles reports whether files is A's tree. On a loaded baseline it
// compares the encoded entries in place: a no-op commit learns that
// nothing changed without building A's map.
func (b *baseline) sameFiles(files map[string]cas.ID) bool {
	if b.Files != nil {
		return sameTree(b.Files, files)
	}
	if len(files) != b.count {
		return false
	}
	r := &stateReader{b: b.entries}
	for range b.count {
		p := r.bytes(int(r.u16()))
		id, ok := files[string(p)]
		if !ok || !bytes.Equal(id[:], r.bytes(32)) {
			return false
		}
	}
	return true
}

// delta returns the paths where files differs from A, each with its ID in
// files (zero: removed), and A's IDs at those paths. On a loaded baseline
// it walks the encoded entries once, looking each up in files; A's paths
// are decoded into a set only when files holds paths A lacks.
func (b *baseline) delta(files map[string]cas.ID) (changes, old map[string]cas.ID) {
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
		r := &stateReader{b: b.entries}
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
		base := b.files()
		for p, id := range files {
			if _, ok := base[p]; !ok {
				changes[p] = id
			}
		}
	}
	return changes, old
}

// encodeBaseline writes entries in map order: the file is private and
// read whole, so sorting 10,000 paths on every call would buy nothing.
func encodeBaseline(b *baseline) []byte {
	files := b.files()
	out := make([]byte, 0, len(baselineMagic)+48+(len(files)+len(b.Held))*(40+34)+32)
	if b.exact() {
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
	if !b.exact() {
		out = binary.BigEndian.AppendUint32(out, uint32(len(b.Held)))
		for _, p := range sortedKeys(b.Held) {
			id := b.Held[p]
			out = binary.BigEndian.AppendUint16(out, uint16(len(p)))
			out = append(out, p...)
			out = append(out, id[:]...)
		}
	}
	sum := cas.Sum(out)
	return append(out, sum[:]...)
}

func decodeBaseline(data []byte) (*baseline, error) { return parseBaseline(data, true) }

// parseBaseline decodes a baseline, checking its checksum when verify is
// set (unset only for bytes this process encoded or already verified).
func parseBaseline(data []byte, verify bool) (*baseline, error) {
	magic := baselineMagic
	if len(data) >= len(baselineHeldMagic) && string(data[:len(baselineHeldMagic)]) == baselineHeldMagic {
		magic = baselineHeldMagic
	}
	var r *stateReader
	if verify {
		var err error
		if r, err = newStateReader(data, magic); err != nil {
			return nil, err
		}
	} else {
		if len(data) < len(magic)+32 || string(data[:len(magic)]) != magic {
			return nil, errBadStateFile
		}
		r = &stateReader{b: data[len(magic) : len(data)-32]}
	}
	b := &baseline{Generation: r.u64()}
	copy(b.Head[:], r.bytes(32))
	b.count = int(r.u32())
	if b.count > len(data)/34 {
		return nil, errBadStateFile
	}
	// Check the structure now (cheap, no allocation) so files() cannot fail.
	b.entries = r.b
	for i := 0; i < b.count && r.ok(); i++ {
		r.bytes(int(r.u16()) + 32)
	}
	if magic == baselineHeldMagic && r.ok() {
		b.entries = b.entries[:len(b.entries)-len(r.b)]
		n := int(r.u32())
		if n == 0 || n > len(r.b)/34 {
			return nil, errBadStateFile
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
		return nil, errBadStateFile
	}
	return b, nil
}

// The stat cache: a workdir.Entry (workdir.Entry) per file of L, the stat
// fields that change when the file is written, the file ID of the content
// read at that stat, and whether the entry may be trusted (its mtime was
// older than the scan that recorded it, see workdir's scan.go).
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
	r, err := newStateReader(data, statCacheMagic)
	if err != nil {
		return nil, err
	}
	n := int(r.u32())
	if !r.ok() {
		return nil, errBadStateFile
	}
	m, err := workdir.DecodeStatCache(r.b, n)
	if err != nil {
		return nil, errBadStateFile
	}
	return m, nil
}

// frozenString returns b as a string without copying it: the paths of a
// state file are substrings of the bytes it was read into, instead of a
// copy of 1 MB at 10,000 files. b must never be written again (a state
// file's buffer is only decoded).
func frozenString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// stateReader decodes a checksummed state file; any overrun or trailing
// byte makes it invalid rather than partially read.
type stateReader struct {
	b   []byte
	bad bool
}

func newStateReader(data []byte, magic string) (*stateReader, error) {
	if len(data) < len(magic)+32 || string(data[:len(magic)]) != magic {
		return nil, errBadStateFile
	}
	body := data[:len(data)-32]
	if sum := cas.Sum(body); !bytes.Equal(sum[:], data[len(data)-32:]) {
		return nil, errBadStateFile
	}
	return &stateReader{b: body[len(magic):]}, nil
}

func (r *stateReader) bytes(n int) []byte {
	if r.bad || n > len(r.b) {
		r.bad = true
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *stateReader) u16() uint16 {
	if b := r.bytes(2); b != nil {
		return binary.BigEndian.Uint16(b)
	}
	return 0
}
func (r *stateReader) u32() uint32 {
	if b := r.bytes(4); b != nil {
		return binary.BigEndian.Uint32(b)
	}
	return 0
}
func (r *stateReader) u64() uint64 {
	if b := r.bytes(8); b != nil {
		return binary.BigEndian.Uint64(b)
	}
	return 0
}
func (r *stateReader) ok() bool   { return !r.bad }
func (r *stateReader) done() bool { return !r.bad && len(r.b) == 0 }

// recoveryFlag is recorded before L is rewritten and removed once L and
// the baseline are durable. Its presence makes the next call resynchronise.
type recoveryFlag struct {
	Op             string `json:"op"`
	Stage          string `json:"stage"`
	RemoteAccepted string `json:"remoteAccepted"`
	Generation     uint64 `json:"generation"`
	// Rewrite is the checksum of the rewrite record (rewrite_record.go)
	// describing the rewrite of L this flag covers; empty: none.
	Rewrite string `json:"rewrite,omitempty"`
}

// dirState is the private state of one visible directory.
type dirState struct {
	path  string // P/dirs/<hash>
	dir   string // L (resolved), recorded in "where" beside the first baseline
	store string // the engine's storeKey, recorded in "where"
	// remember records the engine's store for dir with each baseline
	// (remembered.go; nil: not recorded).
	remember func(realDir string)
	// kept is what a long-lived engine remembers of this L (memory.go):
	// the baseline it last read or wrote, reused while P's file is
	// that one. nil: none (CLI), every load reads P.
	kept *dirMemory
}

// whereRecord is P/dirs/<h>/where: which L (and store) this state belongs
// to. It is written before the first baseline, so its presence tells a
// lost baseline from a directory never pulled, and it lets a new notebook
// directory find the existing ones it would contain.
type whereRecord struct {
	Dir   string `json:"dir"`
	Store string `json:"store"`
}

func (d dirState) pulledBefore() bool {
	_, err := os.Stat(d.file("where"))
	return err == nil
}

func (d dirState) recordWhere() error {
	if d.dir == "" || d.pulledBefore() {
		return nil
	}
	data, _ := json.Marshal(whereRecord{Dir: d.dir, Store: d.store})
	return pstate.WriteAtomic(d.file("where"), data)
}

func (d dirState) file(name string) string { return filepath.Join(d.path, name) }

// loadBaseline returns nil when the directory was never pulled, and
// errBadStateFile when the baseline cannot be trusted (the caller logs it
// and treats the directory as never pulled: a pull then keeps every local
// file, at worst as a conflict block, and commits are refused until then).
func (d dirState) loadBaseline() (*baseline, error) {
	name := d.file("baseline")
	f, err := os.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		d.kept.forgetBaseline()
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if b := d.kept.recallBaseline(f); b != nil {
		return b, nil
	}
	data, err := readSized(f)
	if err != nil {
		return nil, err
	}
	b, err := decodeBaseline(data)
	if err != nil {
		d.kept.forgetBaseline()
		return nil, err
	}
	b.kept = d.kept.keepBaseline(f, data, nil)
	return b, nil
}

// readSized reads the rest of f into a buffer of f's size, as
// os.ReadFile does: io.ReadAll grows from 512 bytes by doubling, which for
// a baseline of 700 KB (10,000 files) allocates, clears and copies about
// twice that in a process that reads it once.
func readSized(f *os.File) ([]byte, error) {
	size := 512
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 && fi.Size() < 1<<40 {
		size = int(fi.Size()) + 1 // one more byte to see EOF without growing
	}
	data := make([]byte, 0, size)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)] // the file grew: room for more
		}
	}
}

func (d dirState) saveBaseline(b *baseline) error {
	if err := d.recordWhere(); err != nil {
		return err
	}
	if d.remember != nil {
		d.remember(d.dir)
	}
	if p := b.prepared; p != nil && p.wait() == nil && p.matches(b) {
		d.kept.forgetBaseline()
		if err := p.install(d); err != nil {
			return err
		}
		if f, err := os.Open(d.file("baseline")); err == nil {
			b.kept = d.kept.keepBaseline(f, p.data, b)
			f.Close()
		}
		return nil
	}
	data := encodeBaseline(b)
	d.kept.forgetBaseline() // until the new file is in place
	if err := pstate.WriteAtomic(d.file("baseline"), data); err != nil {
		return err
	}
	if f, err := os.Open(d.file("baseline")); err == nil {
		b.kept = d.kept.keepBaseline(f, data, b)
		f.Close()
	}
	return nil
}

// preparedBaseline is a baseline written ahead: encoded, written to
// P/.baseline.spare and fsynced on its own goroutine while the commit
// that would make it A is being published, so that recording A once the
// publication is accepted costs the exchange and the fsync of P's directory
// only. It is a temporary file like any other until then: the baseline
// file is replaced only after acceptance, so a crash at any point leaves
// the old or the new baseline, as writeAtomic does; a publication that is
// not accepted, or whose accepted state differs from the one prepared
// (another generation or head, or L to be rewritten), discards it. The
// name is fixed so that a crash leaves at most one such file, which the
// next preparation overwrites.
//
// Installing exchanges the two files (osfile.Exchange) rather than
// renaming one over the other: the spare then holds the old baseline,
// which no one reads, and the next commit's preparation writes over it, so
// a commit neither creates nor frees an inode for A (about 150 µs of CPU
// each on an ext4 disk that frees inodes often). That reuse is safe
// because A is read only under the directory's lock (session.go), never
// by a reader that could still hold the old file open.
type preparedBaseline struct {
	gen   uint64
	head  cas.ID
	files map[string]cas.ID
	tmp   string
	done  chan struct{}
	data  []byte // set with err once done
	err   error
	used  bool
}

// prepareBaseline starts writing b ahead. b.Files must not change until
// the preparation is waited for.
func (d dirState) prepareBaseline(b *baseline) *preparedBaseline {
	p := &preparedBaseline{gen: b.Generation, head: b.Head, files: b.Files, tmp: d.file(baselineSpare), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.data = encodeBaseline(b)
		f, err := os.OpenFile(p.tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			p.err = err
			return
		}
		if _, err = f.Write(p.data); err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		p.err = err
	}()
	return p
}

// wait returns once the preparation is done, with its outcome.
func (p *preparedBaseline) wait() error {
	<-p.done
	return p.err
}

// matches reports whether b is the baseline prepared: the same generation
// and head, and the very tree (the map it was encoded from, still held).
func (p *preparedBaseline) matches(b *baseline) bool {
	return p.gen == b.Generation && p.head == b.Head && b.exact() && sameMap(p.files, b.Files)
}

// baselineSpare is the prepared baseline's file (preparedBaseline).
const baselineSpare = ".baseline.spare"

// install makes the prepared file the baseline (exchange, then fsync of
// P's directory, as writeAtomic).
func (p *preparedBaseline) install(d dirState) error {
	crashpoint.Hit(cpInstallBaseline, "baseline")
	if err := osfile.Exchange(p.tmp, d.file("baseline")); err != nil {
		return err
	}
	p.used = true
	return osfile.SyncDir(d.path)
}

// discard waits for the preparation and removes its file unless it was
// installed (installed, the file holds the baseline before, for the next
// preparation to write over).
func (p *preparedBaseline) discard() {
	if p == nil {
		return
	}
	p.wait()
	if !p.used {
		os.Remove(p.tmp)
	}
}

// sameMap reports whether a and b are one map (not merely equal ones).
func sameMap(a, b map[string]cas.ID) bool {
	if a == nil || b == nil {
		return false
	}
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// saveHeld keeps the content of a held base (idempotent: the name is its
// file ID), durable before the baseline naming it is recorded.
func (d dirState) saveHeld(id cas.ID, content []byte) error {
	name := filepath.Join(d.path, "held", hex.EncodeToString(id[:]))
	if _, err := os.Stat(name); err == nil {
		return nil
	}
	return pstate.WriteAtomic(name, content)
}

// loadHeld returns a held base's content, checked against its ID.
func (d dirState) loadHeld(id cas.ID) ([]byte, bool) {
	c, err := os.ReadFile(filepath.Join(d.path, "held", hex.EncodeToString(id[:])))
	if err != nil {
		return nil, false
	}
	if got, err := cas.WriteFile(nil, c); err != nil || got != id {
		return nil, false
	}
	return c, true
}

// pruneHeld removes the held contents b no longer names.
func (d dirState) pruneHeld(b *baseline) {
	dir := filepath.Join(d.path, "held")
	names, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	keep := map[string]bool{}
	if b != nil && !b.exact() {
		files := b.files()
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

// loadStatCache returns an empty cache when there is none or it is
// unreadable: the cache only saves reads, it never decides content.
func (d dirState) loadStatCache() *workdir.StatCache {
	data, err := os.ReadFile(d.file("statcache"))
	if err != nil {
		return workdir.NewStatCache()
	}
	m, err := decodeStatCache(data)
	if err != nil {
		return workdir.NewStatCache()
	}
	return m
}

// saveStatCache records m. A commit that changed files but no path
// leaves the cache's length as it was: the file is then overwritten in
// place (osfile.Overwrite) rather than replaced through a new one, which
// costs about 150 µs of CPU on an ext4 disk that frees inodes often. A
// write met half done or cut by a crash fails the cache's checksum, and
// an unreadable cache is an empty one (loadStatCache).
func (d dirState) saveStatCache(m *workdir.StatCache) error {
	return pstate.Overwrite(d.file("statcache"), encodeStatCache(m))
}

func (d dirState) loadRecovery() (*recoveryFlag, error) {
	data, err := os.ReadFile(d.file("recovery"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var f recoveryFlag
	if json.Unmarshal(data, &f) != nil {
		// Unreadable but present: recovery is still required.
		return &recoveryFlag{Stage: "unknown", RemoteAccepted: "unknown"}, nil
	}
	return &f, nil
}

func (d dirState) setRecovery(f recoveryFlag) error {
	data, _ := json.Marshal(f)
	return pstate.WriteAtomic(d.file("recovery"), data)
}

func (d dirState) clearRecovery() error {
	crashpoint.Hit(cpRemoveState, "recovery")
	err := os.Remove(d.file("recovery"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return osfile.SyncDir(d.path)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
