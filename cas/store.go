package cas

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Store is the local pack store: a directory of verified packs, safe for
// concurrent readers in one process and for several processes sharing the
// directory. It is a Source.
//
// The store keeps only an index in memory (ID -> pack, offset, length) and
// reads each object with one ReadAt; handles of at most 64 recently read
// packs stay open (none on Windows, where an open file could not be
// removed by another process). Pack files are named by the caller; files
// whose names start with "." are temporary and ignored.
type Store struct {
	dir string

	files *packFiles // open handles of recently read packs

	mu     sync.RWMutex
	closed bool
	packs  map[string]*storedPack // loaded packs by file name
	broken map[string]error       // files in dir that failed to load
	index  map[ID]location        // objects of packs loaded on their own
	midx   *mergedIndex           // objects of the packs the merged index lists (store_index.go)
	// The directory's modification time at the last scan, and when that
	// scan started: a miss skips the rescan only while the directory is
	// provably unchanged (see refreshIfChanged).
	scannedMtime time.Time
	scannedAt    time.Time
	swept        bool // stale temporary files were removed (first scan)
}

// storedPack is one loaded pack file; index locations point to it.
type storedPack struct {
	name string
	size int64
}

type location struct {
	pack   *storedPack
	offset uint64
	stored uint32
}

// racyWindow is how long after a directory's modification time a scan must
// start before an unchanged modification time proves no pack was added
// since: generous enough for coarse file system timestamps.
const racyWindow = 2 * time.Second

// OpenStore opens (creating if needed) the pack store in dir. It reads the
// header, trailer and index of every pack already there, not their
// contents: those packs were verified by the AddPack that stored them.
// Packs recorded in the merged index (store_index.go) are not read at all:
// their size is checked and the one index file serves their objects.
func OpenStore(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cas: open store: %w", err)
	}
	s := &Store{
		dir:    dir,
		files:  newPackFiles(),
		packs:  make(map[string]*storedPack),
		broken: make(map[string]error),
		index:  make(map[ID]location),
	}
	if err := s.Refresh(); err != nil {
		return nil, err
	}
	return s, nil
}

// Refresh loads packs that other processes added to the directory and
// forgets packs that were removed. Get does this on a miss, unless the
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
	des, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("cas: scan store: %w", err)
	}
	present := make(map[string]bool, len(des))
	for _, de := range des {
		name := de.Name()
		if strings.HasPrefix(name, ".") {
			if !s.swept {
				removeStaleTemp(s.dir, de)
			}
			continue
		}
		if de.Type().IsRegular() {
			present[name] = true
		}
	}
	if !s.swept {
		s.useMergedIndexLocked(present)
	}
	loaded, objects := 0, len(s.index)
	for _, de := range des {
		name := de.Name()
		if !present[name] || s.packs[name] != nil {
			continue
		}
		if err := s.loadLocked(name); err != nil {
			s.broken[name] = err
		} else {
			delete(s.broken, name)
			loaded++
		}
	}
	gone := false
	for name, p := range s.packs {
		if !present[name] {
			delete(s.packs, name)
			s.files.drop(p)
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
	} else if !s.swept && (loaded >= mergedRewritePacks || len(s.index)-objects >= mergedRewriteObjects) {
		s.writeMergedIndexLocked()
	}
	s.scannedMtime, s.scannedAt = st.ModTime(), start
	s.swept = true
	return nil
}

// staleTempAge is how old a temporary file must be before a newly opened
// store removes it: the leftover of a process that died in AddPack, not
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

// loadLocked reads the structure of the pack file name and adds its
// objects to the index.
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
	size := st.Size()
	head := make([]byte, packHeaderSize)
	n, err := f.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if err := checkHeader(head[:n], size); err != nil {
		return err
	}
	tail := make([]byte, packTrailerSize)
	if _, err := f.ReadAt(tail, size-packTrailerSize); err != nil {
		return err
	}
	indexOff, count, err := checkTrailer(tail, size)
	if err != nil {
		return err
	}
	index := make([]byte, count*indexEntrySize)
	if _, err := f.ReadAt(index, int64(indexOff)); err != nil {
		return err
	}
	if err := checkIndex(index, indexOff); err != nil {
		return err
	}
	s.installLocked(name, index, size)
	return nil
}

// installLocked records the pack file name (once, even if loaded twice by
// racing paths) and indexes the objects of index not indexed yet.
func (s *Store) installLocked(name string, index []byte, size int64) {
	p := s.packs[name]
	if p == nil {
		p = &storedPack{name: name, size: size}
		s.packs[name] = p
	}
	for i := 0; i < len(index); i += indexEntrySize {
		e := readIndexEntry(index[i:])
		if _, ok := s.index[e.id]; !ok {
			s.index[e.id] = location{pack: p, offset: e.offset, stored: e.stored}
		}
	}
}

// rebuildIndexLocked drops index entries of packs no longer present and
// reloads the remaining packs' indexes (objects may have been in both).
func (s *Store) rebuildIndexLocked() {
	s.index = make(map[ID]location, len(s.index)+s.midx.count())
	s.midx = nil
	names := make([]string, 0, len(s.packs))
	for name, p := range s.packs {
		names = append(names, name)
		s.files.drop(p)
	}
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
// no slashes) atomically: temp file, rename. Adding a name that is
// already present is a no-op. Verification is complete: the trailer
// checksum, the index, and every object against its ID and kind rules.
func (s *Store) AddPack(name string, data []byte) error {
	if err := checkPackName(name); err != nil {
		return err
	}
	p, err := openVerified(data)
	if err != nil {
		return fmt.Errorf("cas: add pack %q: %w", name, err)
	}
	// Packs of different names are written in parallel (a sync adds
	// several at once); two writers of one name both rename the same
	// bytes in, and installLocked records the name once.
	if s.HasPack(name) {
		return nil
	}
	if err := writeFileRenamed(s.dir, name, data); err != nil {
		// Another process may have stored the name meanwhile (on Windows a
		// rename onto a file it is reading fails): then it is present.
		if s.HasPack(name) {
			return nil
		}
		return fmt.Errorf("cas: add pack %q: %w", name, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrStoreClosed
	}
	delete(s.broken, name)
	s.installLocked(name, p.index, int64(len(data)))
	return nil
}

func checkPackName(name string) error {
	if name == "" || strings.HasPrefix(name, ".") || strings.ContainsAny(name, "/\\\x00") || len(name) > 255 {
		return fmt.Errorf("cas: invalid pack name %q", name)
	}
	return nil
}

// writeFileRenamed makes dir/name hold data or nothing for every reader:
// the bytes go to a temporary file renamed over the name. Neither is
// fsynced: the store is a cache of packs the remote store holds, and a
// pack a crash tears or loses costs a download, never content. A lost or
// truncated file fails the header, trailer or size check when it is
// loaded and is fetched again; damage inside a pack fails its objects' ID
// check on read, and the caller then drops the pack (server's healing).
// The fsyncs cost a commit that fetches others' packs two disk flushes
// per pack.
func writeFileRenamed(dir, name string, data []byte) (err error) {
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(dir, "."+name+"."+hex.EncodeToString(rnd[:])+".tmp")
	if err = os.WriteFile(tmp, data, 0o600); err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// HasPack reports whether a pack file named name is loaded; if it is not,
// it looks for that one file on disk (another process may have added it)
// and loads it. A file that exists but is not a valid pack is not a pack.
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
	if s.packs[name] == nil {
		if err := s.loadLocked(name); err != nil {
			s.broken[name] = err
			return false
		}
		delete(s.broken, name)
	}
	return true
}

// Packs returns the names of the loaded packs and, for each file in the
// directory that could not be loaded, why.
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

// VerifyPack reads the pack file name completely and verifies it as
// AddPack does.
func (s *Store) VerifyPack(name string) error {
	if err := checkPackName(name); err != nil {
		return err
	}
	data, err := os.ReadFile(filepath.Join(s.dir, name))
	if err != nil {
		return fmt.Errorf("cas: verify pack %q: %w", name, err)
	}
	if _, err := openVerified(data); err != nil {
		return fmt.Errorf("cas: verify pack %q: %w", name, err)
	}
	return nil
}

// openVerified opens data as a pack and verifies every object: the
// complete check of bytes before the store accepts them.
func openVerified(data []byte) (*Pack, error) {
	p, err := OpenPack(data)
	if err != nil {
		return nil, err
	}
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

// Get returns the object id, verified against its ID.
func (s *Store) Get(id ID) (Object, error) {
	loc, err := s.lookup(id)
	if err != nil {
		return Object{}, err
	}
	o, err := s.read(loc, id)
	if errors.Is(err, fs.ErrNotExist) {
		// Another process removed the pack: find the object elsewhere.
		if err := s.Refresh(); err != nil {
			return Object{}, err
		}
		if loc, err = s.lookup(id); err != nil {
			return Object{}, err
		}
		o, err = s.read(loc, id)
	}
	return o, err
}

func (s *Store) read(loc location, id ID) (Object, error) {
	h, err := s.files.acquire(loc.pack, filepath.Join(s.dir, loc.pack.name))
	if err != nil {
		return Object{}, fmt.Errorf("cas: read pack %q: %w", loc.pack.name, err)
	}
	defer s.files.release(h)
	rec := make([]byte, recordHeader+int(loc.stored))
	if _, err := h.f.ReadAt(rec, int64(loc.offset)); err != nil {
		if errors.Is(err, io.EOF) {
			err = fmt.Errorf("pack %q changed size: %w", loc.pack.name, ErrTruncated)
		}
		return Object{}, fmt.Errorf("cas: read pack %q: %w", loc.pack.name, err)
	}
	o, err := decodeRecord(rec, indexEntry{id: id, offset: loc.offset, stored: loc.stored})
	if err != nil {
		return Object{}, fmt.Errorf("cas: pack %q: %w", loc.pack.name, err)
	}
	return o, nil
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
	s.packs, s.broken, s.index, s.midx = nil, nil, nil, nil
	s.files.dropAll()
	return nil
}
