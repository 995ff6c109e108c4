// Package filestore is the embedded directory store (DESIGN §5): a
// remote.Store on one local directory, shared by several processes on one
// machine. Its guarantees are the Store contract (remote/remotetest runs it
// here) and are described on Store.
package filestore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/crashpoint"
	"github.com/slivingdoc/slivingdoc/internal/osfile"
	"github.com/slivingdoc/slivingdoc/remote"
)

// Store is the embedded directory store: one object per file under the root,
// the key's "/" mapped to directories. It is safe for several goroutines
// and several processes on one machine:
//
//   - every write goes to a temporary file in <root>/.tmp that is fsynced,
//     renamed over the target and followed by an fsync of the target's
//     directory, so a reader sees the old bytes or the new bytes, never a
//     partial file, and an acknowledged write survives a crash;
//   - conditional writes compare and rename while holding an exclusive lock
//     on <root>/.lock (internal/osfile: flock on unix, LockFileEx on windows),
//     so exactly one
//     of racing writers, in any process, wins. The temporary file is written
//     and fsynced before the lock is taken to keep the critical section short.
//
// The ETag is derived from the content (BLAKE3), so it needs no side file
// and is the same in every process. List leaves ETag empty: computing it
// would read every object.
type Store struct {
	root     string
	identity string
	mu       sync.Mutex // serialises this process's writers before the file lock
}

const (
	fileLockName = ".lock"
	fileTempDir  = ".tmp"
	// staleTemp is how old a temporary file must be before New removes
	// it: older than any write in flight, young enough not to pile up.
	staleTemp = time.Hour
)

// New returns the directory store rooted at dir (created if needed).
func New(dir string) (remote.Store, error) {
	if dir == "" {
		return nil, fmt.Errorf("remote: file store: empty directory")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("remote: file store: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(abs, fileTempDir), 0o755); err != nil {
		return nil, fmt.Errorf("remote: file store: %w", mapFileErr(err))
	}
	// The identity must not change with the spelling of the path.
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	f := &Store{root: abs, identity: "file://" + filepath.ToSlash(abs)}
	f.removeStaleTemps()
	return f, nil
}

// Identity implements remote.Store.
func (f *Store) Identity() string { return f.identity }

func (f *Store) path(key string) (string, error) {
	if err := remote.CheckKey(key); err != nil {
		return "", err
	}
	return filepath.Join(f.root, filepath.FromSlash(key)), nil
}

// fileETag is the ETag of content: quoted, like S3's.
func fileETag(data []byte) string {
	sum := cas.Sum(data)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

// Get implements remote.Store.
func (f *Store) Get(ctx context.Context, key string) ([]byte, string, error) {
	p, err := f.path(key)
	if err != nil {
		return nil, "", err
	}
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	data, err := readObject(p)
	if err != nil {
		return nil, "", fmt.Errorf("remote: file store: get %s: %w", key, err)
	}
	return data, fileETag(data), nil
}

// readObject reads one object; a directory at the path is "not found"
// (it is a key prefix, not an object).
func readObject(p string) ([]byte, error) {
	data, err := readShared(p)
	if err != nil {
		return nil, mapFileErr(err)
	}
	return data, nil
}

// Head implements remote.Store.
func (f *Store) Head(ctx context.Context, key string) (remote.ObjectInfo, error) {
	data, etag, err := f.Get(ctx, key)
	if err != nil {
		return remote.ObjectInfo{}, err
	}
	return remote.ObjectInfo{Key: key, Size: int64(len(data)), ETag: etag}, nil
}

// Put implements remote.Store.
func (f *Store) Put(ctx context.Context, key string, data []byte) error {
	_, err := f.write(ctx, "put", key, data, func(p string) error { return nil })
	return err
}

// CreateIfAbsent implements remote.Store.
func (f *Store) CreateIfAbsent(ctx context.Context, key string, data []byte) (string, error) {
	return f.write(ctx, "create", key, data, createCheck)
}

// ReplaceIfMatch implements remote.Store.
func (f *Store) ReplaceIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	return f.write(ctx, "replace", key, data, matches(etag))
}

// createCheck is CreateIfAbsent's condition.
func createCheck(p string) error {
	if _, err := os.Lstat(p); err == nil {
		return fmt.Errorf("exists: %w", remote.ErrPrecondition)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return mapFileErr(err)
	}
	return nil
}

// matches is ReplaceIfMatch's condition.
func matches(etag string) func(p string) error {
	return func(p string) error {
		cur, err := readObject(p)
		if errors.Is(err, remote.ErrNotFound) {
			return fmt.Errorf("absent: %w", remote.ErrPrecondition)
		}
		if err != nil {
			return err
		}
		if fileETag(cur) != etag {
			return fmt.Errorf("etag does not match: %w", remote.ErrPrecondition)
		}
		return nil
	}
}

// cpWrite is the crash point (internal/crashpoint) of the store's writes:
// one before each write takes effect (under the lock, its condition
// checked), so a crash there is a request that never reached the store.
// The fsync of the directory after it is osfile's point: a request that
// took effect but whose reply was lost. Deletes have none: only cleanup
// deletes, and no crash test drives it yet (a label no test reaches fails
// the exhaustive crash test).
var cpWrite = crashpoint.Register("store.write")

// write stages data in a durable temporary file, then, under the lock,
// runs check on the target path and renames the temporary file over it.
func (f *Store) write(ctx context.Context, op, key string, data []byte, check func(p string) error) (etag string, err error) {
	p, err := f.path(key)
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil && !errors.Is(err, remote.ErrInvalidKey) {
			err = fmt.Errorf("remote: file store: %s %s: %w", op, key, err)
		}
	}()
	if err := ctx.Err(); err != nil {
		return "", err
	}
	tmp, err := f.stage(data)
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp) // no-op once renamed

	unlock, err := f.lock()
	if err != nil {
		return "", err
	}
	defer unlock()
	// Checked again under the lock: a cancelled write must not land.
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := check(p); err != nil {
		return "", err
	}
	crashpoint.Hit(cpWrite, key)
	if err := mkdirAllSync(f.root, filepath.Dir(p)); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, p); err != nil {
		return "", mapFileErr(err)
	}
	if err := osfile.SyncDir(filepath.Dir(p)); err != nil {
		// The new content is visible but may not survive a crash: the
		// caller cannot tell which, so the outcome is ambiguous.
		return "", fmt.Errorf("%w: fsync directory: %w", remote.ErrAmbiguous, err)
	}
	return fileETag(data), nil
}

// stage writes data to a new fsynced temporary file and returns its path.
func (f *Store) stage(data []byte) (string, error) {
	var rnd [12]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(f.root, fileTempDir, hex.EncodeToString(rnd[:]))
	fh, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", mapFileErr(err)
	}
	_, werr := fh.Write(data)
	if werr == nil {
		werr = fh.Sync()
	}
	if cerr := fh.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(tmp)
		return "", mapFileErr(werr)
	}
	return tmp, nil
}

// lock takes the in-process mutex and the cross-process file lock.
func (f *Store) lock() (func(), error) {
	f.mu.Lock()
	l, err := osfile.Acquire(filepath.Join(f.root, fileLockName), 0o644)
	if errors.Is(err, errors.ErrUnsupported) {
		// js, wasip1, plan9: without a lock the cross-process guarantee
		// cannot hold, so every write is refused rather than silently unsafe.
		err = fmt.Errorf("%w: %w", remote.ErrIncompatible, err)
	}
	if err != nil {
		f.mu.Unlock()
		if errors.Is(err, remote.ErrIncompatible) {
			return nil, fmt.Errorf("lock: %w", err)
		}
		return nil, fmt.Errorf("lock: %w", mapFileErr(err))
	}
	return func() {
		_ = l.Release()
		f.mu.Unlock()
	}, nil
}

// Delete implements remote.Store.
func (f *Store) Delete(ctx context.Context, key string) error {
	p, err := f.path(key)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	unlock, err := f.lock()
	if err != nil {
		return fmt.Errorf("remote: file store: delete %s: %w", key, err)
	}
	defer unlock()
	if err := os.Remove(p); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if info, serr := os.Lstat(p); serr == nil && info.IsDir() {
			return nil // a key prefix, not an object
		}
		return fmt.Errorf("remote: file store: delete %s: %w", key, mapFileErr(err))
	}
	if err := osfile.SyncDir(filepath.Dir(p)); err != nil {
		return fmt.Errorf("remote: file store: delete %s: %w: fsync directory: %w", key, remote.ErrAmbiguous, err)
	}
	return nil
}

// List implements remote.Store: keys with prefix, sorted, ETag left empty.
func (f *Store) List(ctx context.Context, prefix string) ([]remote.ObjectInfo, error) {
	return f.list(ctx, prefix, "")
}

// ListAfter implements remote.ListerAfter: List without the keys that
// sort at or before after. The directory is still read whole (a listing
// has no order), but the entries left out are not stat-ed: `proposals/`
// keeps every accepted proposal for good, so a commit's listing of the
// window after its base would otherwise stat one file more per
// publication of the notebook's history.
func (f *Store) ListAfter(ctx context.Context, prefix, after string) ([]remote.ObjectInfo, error) {
	return f.list(ctx, prefix, after)
}

// list is List without the keys at or before after ("": none left out).
func (f *Store) list(ctx context.Context, prefix, after string) ([]remote.ObjectInfo, error) {
	if err := remote.CheckPrefix(prefix); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Walk only the directory the prefix's complete segments name.
	start, startKey := f.root, ""
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		start, startKey = filepath.Join(f.root, filepath.FromSlash(prefix[:i])), prefix[:i+1]
	}
	var out []remote.ObjectInfo
	// walk lists dir, whose entries' keys begin with dirKey. Keys are
	// built from the names as they are read, and only the files that
	// are listed are stat-ed.
	var walk func(dir, dirKey string) error
	walk = func(dir, dirKey string) error {
		entries, err := osfile.ReadDirUnsorted(dir)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // the prefix's directory does not exist, or it vanished
			}
			if fi, serr := os.Lstat(dir); serr == nil && !fi.IsDir() {
				return nil // an object: no key below it
			}
			return err
		}
		for _, e := range entries {
			name := e.Name()
			if strings.HasPrefix(name, ".") {
				continue // .tmp, .lock and any other private entry
			}
			key := dirKey + name
			switch {
			case e.IsDir():
				sub := key + "/"
				if !strings.HasPrefix(sub, prefix) && !strings.HasPrefix(prefix, sub) {
					continue // no key below it has the prefix
				}
				if after != "" && after > sub && !strings.HasPrefix(after, sub) {
					continue // every key below it sorts before after
				}
				if err := walk(filepath.Join(dir, name), sub); err != nil {
					return err
				}
			case !e.Type().IsRegular():
			case !strings.HasPrefix(key, prefix) || (after != "" && key <= after):
			default:
				info, err := e.Info()
				if errors.Is(err, fs.ErrNotExist) {
					continue // deleted while listing
				}
				if err != nil {
					return err
				}
				out = append(out, remote.ObjectInfo{Key: key, Size: info.Size()})
			}
		}
		return nil
	}
	if err := walk(start, startKey); err != nil {
		return nil, fmt.Errorf("remote: file store: list %q: %w", prefix, mapFileErr(err))
	}
	slices.SortFunc(out, func(a, b remote.ObjectInfo) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// removeStaleTemps deletes temporary files a crashed writer left behind.
func (f *Store) removeStaleTemps() {
	dir := filepath.Join(f.root, fileTempDir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > staleTemp {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// mkdirAllSync creates dir (below root) and its missing parents, fsyncing
// each parent whose entries changed so the new directories are durable.
func mkdirAllSync(root, dir string) error {
	if info, err := os.Stat(dir); err == nil {
		if !info.IsDir() {
			return fmt.Errorf("%w: %s is an object, not a key prefix", remote.ErrPrecondition, filepath.Base(dir))
		}
		return nil
	}
	if dir == root || len(dir) <= len(root) {
		return nil
	}
	parent := filepath.Dir(dir)
	if err := mkdirAllSync(root, parent); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return mapFileErr(err)
	}
	return osfile.SyncDir(parent)
}

// mapFileErr maps OS errors to the sentinels, keeping the cause.
func mapFileErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.EISDIR), errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("%w: %w", remote.ErrNotFound, err)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%w: %w", remote.ErrAccessDenied, err)
	default:
		return fmt.Errorf("%w: %w", remote.ErrUnavailable, err)
	}
}
