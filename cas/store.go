package cas

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/noinit"
	"github.com/slivingdoc/slivingdoc/internal/osfile"
	"github.com/slivingdoc/slivingdoc/internal/parallel"
)

// Store is the local pack store: a directory of verified packs, safe for
// concurrent readers in one process and for several processes sharing the
// directory. It is a Source.
//
// The store keeps an index in memory (ID -> pack, offset, length) and
// reads each object with one ReadAt, beside the trees it rebuilt from
// deltas (store_trees.go, 16 MiB at most); handles of at most 64 recently read
// files stay open (none on Windows, where an open file could not be
// removed by another process). A pack is kept either in a file of its own,
// named by the caller, or with others in a bundle (bundle.go), a file
// whose name ends in ".bundle"; files whose names start with "." are
// temporary and ignored.
type Store struct {
	dir string

	handles *packFiles // open handles of recently read files
	trees   treeCache  // trees rebuilt and verified, so a delta chain is walked once

	mu     sync.RWMutex
	closed bool
	files  map[string]*storedFile // loaded files by file name
	packs  map[string]*storedFile // loaded packs by pack name: a file holding each
	broken map[string]error       // files in dir that failed to load
	index  map[ID]location        // objects of files loaded on their own
	midx   *mergedIndex           // objects of the files the merged index lists (store_index.go)
	// The directory's modification time at the last scan, and when that
	// scan started: a miss skips the rescan only while the directory is
	// provably unchanged (see refreshIfChanged).
	scannedMtime time.Time
	scannedAt    time.Time
	swept        bool        // stale temporary files were removed (first scan)
	recorded     dirSnapshot // the identity the adopted merged index records
}

// storedFile is one loaded file of the directory, a plain pack or a
// bundle; index locations point into it.
type storedFile struct {
	name   string
	size   int64
	packs  []string // the packs of a bundle, sorted; nil for a plain pack
	merged bool     // its objects are served by the main merged index
}

// packNames returns the names of the packs f holds: a plain pack file
// holds the pack of its own name.
func (f *storedFile) packNames() []string {
	if f.packs == nil {
		return []string{f.name}
	}
	return f.packs
}

type location struct {
	file   *storedFile
	offset uint64 // of the object's record, from the start of the file
	stored uint32
}

// racyWindow is how long after a directory's modification time a scan must
// start before an unchanged modification time proves no pack was added
// since: generous enough for coarse file system timestamps.
const racyWindow = 2 * time.Second

// OpenStore opens (creating if needed) the pack store in dir. It reads the
// header, trailer and index of every pack already there (and each
// bundle's header), not their contents: those packs were verified by the
// AddPacks that stored them. Files recorded in the merged index
// (store_index.go) are not read, nor stat'ed: the directory's listing
// names them and the index files serve their objects; while the directory
// keeps the identity the index recorded, it is not even listed. The files
// this open loads on their own are recorded in the index for the next.
func OpenStore(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cas: open store: %w", err)
	}
	s := &Store{
		dir:     dir,
		handles: newPackFiles(),
		files:   make(map[string]*storedFile),
		packs:   make(map[string]*storedFile),
		broken:  make(map[string]error),
		index:   make(map[ID]location),
	}
	if err := s.Refresh(); err != nil {
		return nil, err
	}
	return s, nil
}

// Refresh loads packs that other processes added to the directory and
// forgets files that were removed. Get does this on a miss, unless the
// directory is provably unchanged since the last scan.
func (s *Store) Refresh() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.scanLocked()
}

func (s *Store) scanLocked() error {
	if s.closed {
		return ErrStoreClosed
	}
	start := time.Now()
	st, err := os.Stat(s.dir)
	if err != nil {
		return fmt.Errorf("cas: scan store: %w", err)
	}
	snap := snapshotOf(st, start)
	var m, x *mergedIndex // read once, on the first scan only
	if !s.swept {
		m, _ = readMergedIndex(s.dir) // missing or invalid: nil, ignored
		x = readSideIndex(s.dir, m)
		if s.useTrustedMergedIndexLocked(m, x, snap) {
			s.swept = true // no file was created since that listing, which swept
			return nil
		}
	}
	des, err := osfile.ReadDirUnsorted(s.dir)
	if err != nil {
		return fmt.Errorf("cas: scan store: %w", err)
	}
	present := make(map[string]bool, len(des))
	temps := false // a temporary file other than the index is left
	for _, de := range des {
		name := de.Name()
		if strings.HasPrefix(name, ".") {
			if !s.swept {
				removeStaleTemp(s.dir, de)
			}
			temps = temps || (name != mergedIndexName && name != sideIndexName)
			continue
		}
		if de.Type().IsRegular() {
			present[name] = true
		}
	}
	if !s.swept {
		s.useMergedIndexLocked(m, x, present)
	}
	var load []string
	for name := range present {
		if s.files[name] == nil {
			load = append(load, name)
		}
	}
	slices.Sort(load) // the same listing loads in the same order
	loaded := 0
	for _, name := range load {
		if err := s.loadLocked(name); err != nil {
			s.broken[name] = err
		} else {
			delete(s.broken, name)
			loaded++
		}
	}
	gone := false
	for name, f := range s.files {
		if !present[name] {
			delete(s.files, name)
			s.handles.drop(f)
			gone = true
		}
	}
	for name := range s.broken {
		if !present[name] {
			delete(s.broken, name)
		}
	}
	if gone {
		s.rebuildIndexLocked()
	} else if !s.swept {
		// The snapshot vouches for the index only if this listing is
		// exactly the files it records.
		ident := snap
		if temps || len(s.broken) > 0 {
			ident = dirSnapshot{}
		}
		s.recordLocked(loaded, ident)
	}
	s.scannedMtime, s.scannedAt = st.ModTime(), start
	s.swept = true
	return nil
}

// staleTempAge is how old a temporary file must be before a newly opened
// store removes it: the leftover of a process that died in AddPacks, not
// the file another process is writing right now.
const staleTempAge = time.Hour

func removeStaleTemp(dir string, de fs.DirEntry) {
	name := de.Name()
	if !strings.HasSuffix(name, ".tmp") || !de.Type().IsRegular() {
		return
	}
	if info, err := de.Info(); err == nil && time.Since(info.ModTime()) > staleTempAge {
		_ = os.Remove(filepath.Join(dir, name)) // best effort: the next open retries
	}
}

// loadLocked reads the structure of the file name, a plain pack or a
// bundle, and adds its objects to the index.
func (s *Store) loadLocked(name string) error {
	f, err := os.Open(filepath.Join(s.dir, name))
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	file := &storedFile{name: name, size: st.Size()}
	if !isBundleName(name) {
		index, err := readPackIndex(f, 0, file.size)
		if err != nil {
			return err
		}
		s.indexLocked(s.addFileLocked(file), index, 0)
		return nil
	}
	bundled, err := readBundleHeader(f, file.size)
	if err != nil {
		return err
	}
	indexes := make([][]byte, len(bundled))
	for i, bp := range bundled {
		if indexes[i], err = readPackIndex(f, int64(bp.offset), int64(bp.length)); err != nil {
			return fmt.Errorf("bundled pack %q: %w", bp.name, err)
		}
		file.packs = append(file.packs, bp.name)
	}
	file = s.addFileLocked(file)
	for i, bp := range bundled {
		s.indexLocked(file, indexes[i], bp.offset)
	}
	return nil
}

// readPackIndex checks the header, trailer and index of the pack of size
// bytes that starts at base in f, and returns its index.
func readPackIndex(f *os.File, base, size int64) ([]byte, error) {
	head := make([]byte, packHeaderSize)
	n, err := f.ReadAt(head, base)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if err := checkHeader(head[:n], size); err != nil {
		return nil, err
	}
	tail := make([]byte, packTrailerSize)
	if _, err := f.ReadAt(tail, base+size-packTrailerSize); err != nil {
		return nil, err
	}
	indexOff, count, err := checkTrailer(tail, size)
	if err != nil {
		return nil, err
	}
	index := make([]byte, count*indexEntrySize)
	if _, err := f.ReadAt(index, base+int64(indexOff)); err != nil {
		return nil, err
	}
	if err := checkIndex(index, indexOff); err != nil {
		return nil, err
	}
	return index, nil
}

// addFileLocked records file and the packs it holds (once, even if loaded
// twice by racing paths) and returns the recorded file.
func (s *Store) addFileLocked(file *storedFile) *storedFile {
	if old := s.files[file.name]; old != nil {
		return old
	}
	s.files[file.name] = file
	for _, name := range file.packNames() {
		if s.packs[name] == nil {
			s.packs[name] = file
		}
	}
	return file
}

// indexLocked indexes the objects of index not indexed yet: the index of
// a pack that starts at base in file.
func (s *Store) indexLocked(file *storedFile, index []byte, base uint64) {
	for i := 0; i < len(index); i += indexEntrySize {
		e := readIndexEntry(index[i:])
		if _, ok := s.index[e.id]; !ok {
			s.index[e.id] = location{file: file, offset: base + e.offset, stored: e.stored}
		}
	}
}

// rebuildIndexLocked drops index entries of files no longer present and
// reloads the remaining files' indexes (objects may have been in both, and
// a pack in two files).
func (s *Store) rebuildIndexLocked() {
	s.index = make(map[ID]location, len(s.index)+s.midx.count())
	s.midx = nil
	names := make([]string, 0, len(s.files))
	for name, f := range s.files {
		names = append(names, name)
		s.handles.drop(f)
	}
	clear(s.files)
	clear(s.packs)
	for _, name := range names {
		if err := s.loadLocked(name); err != nil {
			s.broken[name] = err
		}
	}
}

// refreshIfChanged rescans unless the directory is provably unchanged
// since the last scan: same modification time, and that scan started
// well after it, so a later change would have moved it.
func (s *Store) refreshIfChanged() error {
	st, err := os.Stat(s.dir)
	if err != nil {
		return fmt.Errorf("cas: scan store: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if st.ModTime().Equal(s.scannedMtime) && s.scannedAt.Sub(s.scannedMtime) > racyWindow {
		return nil
	}
	return s.scanLocked()
}

// AddPack verifies data as a pack and stores it under name (a file name,
// no slashes, not ending in ".bundle") atomically: temp file, rename.
// Adding a name that is already present is a no-op. A name must stand
// for one pack's bytes (the engine uses the remote key): an open takes a
// file whose name the merged index records for the file it recorded
// (store_index.go). Verification is complete: the trailer checksum, the
// index, and every object against its ID and kind rules.
func (s *Store) AddPack(name string, data []byte) error {
	return s.AddPacks([]NamedPack{{Name: name, Data: data}})
}

// AddPacks verifies each pack as AddPack does and stores those not present
// yet in one file, atomically: either every one of them is stored or none
// is. Two or more go into a bundle, whose file costs one create and one
// rename however many packs it holds; a single pack gets a file of its own
// name, as with AddPack. A name given twice is stored once.
func (s *Store) AddPacks(packs []NamedPack) error {
	if len(packs) == 0 {
		return nil
	}
	for _, p := range packs {
		if err := checkPackName(p.Name); err != nil {
			return err
		}
	}
	packs = slices.Clone(packs)
	slices.SortStableFunc(packs, func(a, b NamedPack) int { return strings.Compare(a.Name, b.Name) })
	packs = slices.CompactFunc(packs, func(a, b NamedPack) bool { return a.Name == b.Name })
	opened, err := s.verifyPacks(packs)
	if err != nil {
		return err
	}
	// Calls run in parallel: two that store the same pack both write it,
	// and the store keeps using whichever file it loaded first.
	var add []NamedPack
	var indexes [][]byte
	for i, p := range packs {
		if !s.HasPack(p.Name) {
			add = append(add, p)
			indexes = append(indexes, opened[i].index)
		}
	}
	switch len(add) {
	case 0:
		return nil
	case 1:
		return s.addFile(add[0].Name, nil, add, indexes)
	}
	header := encodeBundleHeader(add)
	sum := header[len(header)-32:] // same names and lengths, same file: a pack name stands for its bytes
	return s.addFile(hex.EncodeToString(sum[:16])+bundleSuffix, header, add, indexes)
}

// addFile writes header (nil for a plain pack file) and the bytes of packs
// as the file name and indexes it: indexes are the packs' indexes.
func (s *Store) addFile(name string, header []byte, packs []NamedPack, indexes [][]byte) error {
	data := [][]byte{header}
	names := make([]string, len(packs))
	for i, p := range packs {
		data = append(data, p.Data)
		names[i] = p.Name
	}
	if err := writeFileRenamed(s.dir, name, data...); err != nil {
		// Another process may have stored the packs meanwhile (on Windows
		// a rename onto a file it is reading fails): then they are present.
		if !slices.ContainsFunc(names, func(n string) bool { return !s.HasPack(n) }) {
			return nil
		}
		return fmt.Errorf("cas: add packs %q: %w", names, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrStoreClosed
	}
	delete(s.broken, name)
	file := &storedFile{name: name}
	if header != nil {
		file.packs = names
	}
	base := uint64(len(header))
	offsets := make([]uint64, len(packs))
	for i, p := range packs {
		offsets[i] = base
		base += uint64(len(p.Data))
	}
	file.size = int64(base)
	file = s.addFileLocked(file)
	for i := range packs {
		s.indexLocked(file, indexes[i], offsets[i])
	}
	return nil
}

// verifyPacks opens and verifies every pack, on up to GOMAXPROCS cores:
// decoding and hashing every object is most of the cost of adding a pack.
// The bases of tree deltas are read from the packs of the call and from
// the store: a pack whose base is in neither fails with ErrMissingBase.
func (s *Store) verifyPacks(packs []NamedPack) ([]*Pack, error) {
	opened := make([]*Pack, len(packs))
	errs := make([]error, len(packs))
	_ = parallel.For(len(packs), runtime.GOMAXPROCS(0), func(i int) error {
		opened[i], errs[i] = OpenPack(packs[i].Data)
		return nil
	})
	if err := firstPackErr(packs, errs); err != nil {
		return nil, err
	}
	bases := &packSet{packs: opened, store: s}
	for i, p := range opened {
		opened[i] = p.WithBases(bases) // before any reads the set
	}
	_ = parallel.For(len(packs), runtime.GOMAXPROCS(0), func(i int) error {
		errs[i] = opened[i].Verify()
		return nil // every pack is verified; the first failure by index is reported
	})
	if err := firstPackErr(packs, errs); err != nil {
		return nil, err
	}
	return opened, nil
}

func firstPackErr(packs []NamedPack, errs []error) error {
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("cas: add pack %q: %w", packs[i].Name, err)
		}
	}
	return nil
}

// packSet serves the bases of the packs one AddPacks verifies: the packs
// themselves, then the store. Its packs read their own bases through it,
// so a chain across them and the store is bounded by one budget.
type packSet struct {
	packs []*Pack
	store *Store
}

func (ps *packSet) Get(id ID) (Object, error) {
	o, _, err := ps.getDepth(id, MaxDeltaDepth)
	return o, err
}

func (ps *packSet) getDepth(id ID, budget int) (Object, int, error) {
	for _, p := range ps.packs {
		if p.has(id) {
			return p.getDepth(id, budget)
		}
	}
	return ps.store.getDepth(id, budget)
}

func checkPackName(name string) error {
	if name == "" || strings.HasPrefix(name, ".") || strings.ContainsAny(name, "/\\\x00") || len(name) > 255 || isBundleName(name) {
		return fmt.Errorf("cas: invalid pack name %q", name)
	}
	return nil
}

// writeFileRenamed makes dir/name hold the concatenation of data or
// nothing for every reader: the bytes go to a temporary file renamed over
// the name. Neither is fsynced: the store is a cache of packs the remote
// store holds, and a file a crash tears or loses costs a download, never
// content. A lost or truncated file fails the size, header (a bundle's
// checksum) or trailer check when it is loaded and is fetched again;
// damage inside a pack fails its objects' ID check on read, and the
// caller then drops the file (server's healing). The fsyncs cost a commit
// that fetches others' packs two disk flushes per file.
func writeFileRenamed(dir, name string, data ...[]byte) error {
	return osfile.WriteFile(filepath.Join(dir, name), 0o600, false, data...)
}

// HasPack reports whether a loaded file holds the pack name; if none does,
// it looks for a pack file of that name on disk (another process may have
// added it) and loads it. A file that exists but is not a valid pack is
// not a pack. Packs that other processes added in a bundle are seen after
// a Refresh (or a Get that missed).
func (s *Store) HasPack(name string) bool {
	s.mu.RLock()
	ok := s.packs[name] != nil
	s.mu.RUnlock()
	if ok {
		return true
	}
	if checkPackName(name) != nil {
		return false
	}
	if _, err := os.Stat(filepath.Join(s.dir, name)); err != nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if s.files[name] == nil {
		if err := s.loadLocked(name); err != nil {
			s.broken[name] = err
			return false
		}
		delete(s.broken, name)
	}
	return true
}

// Packs returns the names of the loaded packs and, for each file in the
// directory that could not be loaded (a pack or a bundle), why.
func (s *Store) Packs() (names []string, broken map[string]error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for name := range s.packs {
		names = append(names, name)
	}
	broken = make(map[string]error, len(s.broken))
	for name, err := range s.broken {
		broken[name] = err
	}
	return names, broken
}

// VerifyPack reads the pack name completely and verifies it as AddPack
// does; for a pack in a bundle, it also verifies the bundle's header.
func (s *Store) VerifyPack(name string) error {
	if err := checkPackName(name); err != nil {
		return err
	}
	s.mu.RLock()
	file := s.packs[name]
	s.mu.RUnlock()
	var data []byte
	var err error
	if file == nil || file.packs == nil {
		data, err = os.ReadFile(filepath.Join(s.dir, name))
	} else {
		data, err = readBundledPack(filepath.Join(s.dir, file.name), name)
	}
	if err != nil {
		return fmt.Errorf("cas: verify pack %q: %w", name, err)
	}
	if _, err := openVerified(data, s); err != nil {
		return fmt.Errorf("cas: verify pack %q: %w", name, err)
	}
	return nil
}

// readBundledPack returns the bytes of the pack name in the bundle at path.
func readBundledPack(path, name string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	bundled, err := readBundleHeader(f, st.Size())
	if err != nil {
		return nil, err
	}
	i, ok := slices.BinarySearchFunc(bundled, name, func(bp bundledPack, name string) int { return strings.Compare(bp.name, name) })
	if !ok {
		return nil, fmt.Errorf("bundle %q no longer holds it: %w", filepath.Base(path), fs.ErrNotExist)
	}
	data := make([]byte, bundled[i].length)
	if _, err := f.ReadAt(data, int64(bundled[i].offset)); err != nil {
		return nil, err
	}
	return data, nil
}

// RemovePack removes the file that holds the pack name, with every other
// pack of it if it is a bundle, or the file name if it could not be
// loaded (see Packs), and forgets what it held: the way to drop a damaged
// pack so that it can be added again. A name that is neither is
// fs.ErrNotExist.
func (s *Store) RemovePack(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrStoreClosed
	}
	file := ""
	if f := s.packs[name]; f != nil {
		file = f.name
	} else if _, ok := s.broken[name]; ok {
		file = name
	} else {
		return fmt.Errorf("cas: remove pack %q: %w", name, fs.ErrNotExist)
	}
	if err := os.Remove(filepath.Join(s.dir, file)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cas: remove pack %q: %w", name, err)
	}
	return s.scanLocked()
}

// openVerified opens data as a pack and verifies every object: the
// complete check of bytes before the store accepts them.
func openVerified(data []byte, bases Source) (*Pack, error) {
	p, err := OpenPack(data)
	if err != nil {
		return nil, err
	}
	p = p.WithBases(bases)
	if err := p.Verify(); err != nil {
		return nil, err
	}
	return p, nil
}

// lookup returns where id is stored, rescanning the directory on a miss.
func (s *Store) lookup(id ID) (location, error) {
	s.mu.RLock()
	loc, ok := s.findLocked(id)
	closed := s.closed
	s.mu.RUnlock()
	if closed {
		return location{}, ErrStoreClosed
	}
	if ok {
		return loc, nil
	}
	if err := s.refreshIfChanged(); err != nil {
		return location{}, err
	}
	s.mu.RLock()
	loc, ok = s.findLocked(id)
	s.mu.RUnlock()
	if !ok {
		return location{}, ErrNotFound
	}
	return loc, nil
}

// Get returns the object id, verified against its ID. A tree stored as a
// delta is rebuilt from its base, found anywhere in the store.
func (s *Store) Get(id ID) (Object, error) {
	o, _, err := s.getDepth(id, MaxDeltaDepth)
	return o, err
}

// getDepth is Get for depthSource.
// The caller owns the body returned, so a kept tree is handed out as a
// copy (the bases of a delta are only read, and are not copied).
func (s *Store) getDepth(id ID, budget int) (Object, int, error) {
	o, depth, err := s.getAvoiding(id, budget, nil, false)
	if err != nil {
		// Rebuilt again checking every base, to find and avoid a damaged
		// record, or to name it.
		o, depth, err = s.getAvoiding(id, budget, nil, true)
	}
	if err == nil && o.Kind == KindTree {
		o.Body = slices.Clone(o.Body)
	}
	return o, depth, err
}

// errDeltaCycle: rebuilding a tree needs, through the bases of its
// deltas, the tree itself.
var errDeltaCycle error = &noinit.Wrapped{Msg: "cas: corrupt data: tree deltas whose bases lead back to the tree", Base: errCorrupt}

// getAvoiding is getDepth for a base of the trees of path, the deltas
// being rebuilt that asked for it (the outermost first). The store indexes
// one record of each object, but several packs may hold one tree, each
// stored its own way: a proposal's pack holds its tree as a delta from its
// parent's, and a fold's pack may hold that parent as a delta from the
// same tree. Each pack is sound, yet the records the index chose can be
// each other's bases. Then the other records of the object are tried,
// read the same way: a tree is refused only when no record of it leads to
// a tree stored whole.
//
// The tree asked for (path empty) is always checked against its ID; the
// bases on the way only when careful is set (see record.rebuild): getDepth
// first reads a chain checking its end, and reads it carefully only when
// that fails.
func (s *Store) getAvoiding(id ID, budget int, path []ID, careful bool) (Object, int, error) {
	loc, err := s.lookup(id)
	if err != nil {
		return Object{}, 0, err
	}
	if body, depth, ok := s.trees.get(id); ok && depth <= budget {
		return Object{ID: id, Kind: KindTree, Body: body}, depth, nil
	}
	r, err := s.read(loc, id)
	if errors.Is(err, fs.ErrNotExist) {
		// Another process removed the pack: find the object elsewhere.
		if err := s.Refresh(); err != nil {
			return Object{}, 0, err
		}
		if loc, err = s.lookup(id); err != nil {
			return Object{}, 0, err
		}
		r, err = s.read(loc, id)
	}
	if err != nil {
		return Object{}, 0, err
	}
	verify := careful || len(path) == 0
	path = append(slices.Clip(path), id)
	o, depth, err := s.resolveAvoiding(r, budget, path, verify, careful)
	if errors.Is(err, errDeltaCycle) {
		for _, other := range s.otherLocations(id, loc) {
			r, rerr := s.read(other, id)
			if rerr != nil {
				continue
			}
			if o, depth, rerr := s.resolveAvoiding(r, budget, path, verify, careful); rerr == nil {
				if verify || r.enc != encodingDelta {
					s.trees.put(o, depth)
				}
				return o, depth, nil
			}
		}
	}
	if err != nil {
		// A base's own failure names its file too, inside this one.
		return Object{}, 0, fmt.Errorf("cas: pack %q: %w", loc.file.name, err)
	}
	// Only a tree checked against its ID is kept (a record stored whole
	// is checked as it is decoded).
	if verify || r.enc != encodingDelta {
		s.trees.put(o, depth)
	}
	return o, depth, nil
}

// resolveAvoiding rebuilds r, a record of the last tree of path, without
// passing through a tree of path again, checking it against its ID if
// verify is set, and its bases if careful is.
func (s *Store) resolveAvoiding(r record, budget int, path []ID, verify, careful bool) (Object, int, error) {
	return r.rebuild(budget, verify, func(base ID, budget int) (Object, int, error) {
		if slices.Contains(path, base) {
			return Object{}, 0, errDeltaCycle
		}
		return s.getAvoiding(base, budget, path, careful)
	})
}

// otherLocations returns the records of id in the store's files other
// than the one at except, read from the files' indexes on disk: a rare
// path (see getAvoiding), so the in-memory index keeps one per object.
func (s *Store) otherLocations(id ID, except location) []location {
	s.mu.RLock()
	files := make([]*storedFile, 0, len(s.files))
	for _, f := range s.files {
		files = append(files, f)
	}
	s.mu.RUnlock()
	slices.SortFunc(files, func(a, b *storedFile) int { return strings.Compare(a.name, b.name) })
	var out []location
	for _, file := range files {
		for _, loc := range s.locationsIn(file, id) {
			if loc != except {
				out = append(out, loc)
			}
		}
	}
	return out
}

// locationsIn returns the records of id in file (none when it cannot be
// read: the caller has other records to try, or none).
func (s *Store) locationsIn(file *storedFile, id ID) []location {
	f, err := os.Open(filepath.Join(s.dir, file.name))
	if err != nil {
		return nil
	}
	defer f.Close()
	type part struct{ base, size int64 }
	parts := []part{{0, file.size}}
	if isBundleName(file.name) {
		bundled, err := readBundleHeader(f, file.size)
		if err != nil {
			return nil
		}
		parts = parts[:0]
		for _, bp := range bundled {
			parts = append(parts, part{int64(bp.offset), int64(bp.length)})
		}
	}
	var out []location
	for _, p := range parts {
		index, err := readPackIndex(f, p.base, p.size)
		if err != nil {
			continue
		}
		if i, ok := searchID(index, indexEntrySize, id); ok {
			e := readIndexEntry(index[i*indexEntrySize:])
			out = append(out, location{file: file, offset: uint64(p.base) + e.offset, stored: e.stored})
		}
	}
	return out
}

// read reads the record of id at loc. Its version was checked when its
// pack was added, so a delta record is accepted without it.
func (s *Store) read(loc location, id ID) (record, error) {
	h, err := s.handles.acquire(loc.file, filepath.Join(s.dir, loc.file.name))
	if err != nil {
		return record{}, fmt.Errorf("cas: read pack %q: %w", loc.file.name, err)
	}
	defer s.handles.release(h)
	rec := make([]byte, recordHeader+int(loc.stored))
	if _, err := h.f.ReadAt(rec, int64(loc.offset)); err != nil {
		if errors.Is(err, io.EOF) {
			err = fmt.Errorf("pack %q changed size: %w", loc.file.name, ErrTruncated)
		}
		return record{}, fmt.Errorf("cas: read pack %q: %w", loc.file.name, err)
	}
	r, err := parseRecord(rec, indexEntry{id: id, offset: loc.offset, stored: loc.stored}, true)
	if err != nil {
		return record{}, fmt.Errorf("cas: pack %q: %w", loc.file.name, err)
	}
	return r, nil
}

// Has reports whether a pack this Store has loaded holds id. Unlike Get it
// does not look for packs other processes added since the last scan (call
// Refresh for that), so it costs no I/O: it is meant for deciding what to
// pack, where a false negative only stores an object twice.
func (s *Store) Has(id ID) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := s.findLocked(id)
	return ok
}

// findLocked looks id up among the packs loaded on their own, then in the
// merged index.
func (s *Store) findLocked(id ID) (location, bool) {
	if loc, ok := s.index[id]; ok {
		return loc, true
	}
	if s.midx != nil {
		return s.midx.find(id)
	}
	return location{}, false
}

// Close releases the store's memory and open files; later calls fail.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.files, s.packs, s.broken, s.index, s.midx = nil, nil, nil, nil, nil
	s.handles.close()
	s.trees.reset()
	return nil
}
