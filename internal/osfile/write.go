package osfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"

	"github.com/slivingdoc/slivingdoc/internal/crashpoint"
)

// Crash points (internal/crashpoint) of the effects made here: every
// durable write of the private root goes through WriteFile or Overwrite,
// and every directory fsync through SyncDir or SyncOpenDir.
var (
	cpRename    = crashpoint.Register("osfile.rename")
	cpOverwrite = crashpoint.Register("osfile.overwrite")
	cpSyncDir   = crashpoint.Register("osfile.fsync-dir")
)

// TempSuffix ends the name of every temporary file WriteFile makes
// (".<target>.<16 hex>.tmp" beside the target), so that a reader of the
// directory can skip, or clean up, what a crashed writer left.
const TempSuffix = ".tmp"

// WriteFile makes path hold the concatenation of data, or its old content,
// for every reader: the bytes go to a new temporary file (perm) in path's
// directory that is renamed over path. With durable, the temporary file is
// fsynced before the rename and the directory after it, so the write
// survives a crash once WriteFile returns; without, a crash may lose it
// (for caches, whose loss costs a download and whose tearing a checksum
// detects). On error the temporary file is removed.
func WriteFile(path string, perm os.FileMode, durable bool, data ...[]byte) (err error) {
	dir, name := filepath.Split(path)
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(dir, "."+name+"."+hex.EncodeToString(rnd[:])+TempSuffix)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	for _, b := range data {
		if err == nil {
			_, err = f.Write(b)
		}
	}
	if err == nil && durable {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// The one point of a WriteFile: before it the target is untouched
		// (the temporary file is not state), after it the target is new.
		crashpoint.Hit(cpRename, path)
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if durable {
		return SyncDir(filepath.Dir(path))
	}
	return nil
}

// Overwrite makes path hold data, not durably. When path is already a
// regular file of exactly len(data) bytes, data is written over it in
// place: no inode is created or freed, which is what a temporary file and
// a rename cost (on ext4 without a journal, creating a file skips every
// inode of its group freed in the last minute or more, so frequent small
// replacements slow every file creation on the disk). The price: a reader
// may see a mix of the old and the new bytes, and a crash may leave one.
// Only records of fixed length whose readers detect a mix (a checksum)
// may use it; otherwise the first write, and any change of length, goes
// through WriteFile.
func Overwrite(path string, perm os.FileMode, data []byte) error {
	if f, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
		fi, err := f.Stat()
		if err == nil && fi.Mode().IsRegular() && fi.Size() == int64(len(data)) {
			crashpoint.Hit(cpOverwrite, path)
			_, err = f.WriteAt(data, 0)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			return err
		}
		f.Close()
	}
	return WriteFile(path, perm, false, data)
}

// WriteSpare makes path hold data for every reader, as WriteFile does,
// through spare, a file of the caller's naming beside path that no reader
// reads: data is written over spare's content (the file made if needed),
// then spare and path are exchanged atomically (renameat2
// RENAME_EXCHANGE on Linux), so that spare holds path's old content and
// the next write reuses its inode. Neither write creates or frees an
// inode once both exist, which a temporary file and a rename cost each
// time (about 150 µs of CPU on an ext4 disk that frees inodes often,
// against a few µs). Where the exchange is not available, or path does
// not exist yet, spare is renamed over path instead. With durable, spare
// is fsynced before the exchange and the directory after it, as
// WriteFile does.
//
// Only for files whose every reader and writer holds one lock (the
// private state of one directory, under its lock): the spare's inode was
// path's, so a reader that opened path before the exchange and still
// reads it after the next write would meet that write.
func WriteSpare(path, spare string, perm os.FileMode, durable bool, data []byte) error {
	if err := WriteOver(spare, perm, durable, data); err != nil {
		return err
	}
	crashpoint.Hit(cpRename, path)
	if err := Exchange(spare, path); err != nil {
		return err
	}
	if durable {
		return SyncDir(filepath.Dir(path))
	}
	return nil
}

// WriteOver makes name, a file no reader reads (a spare, a file
// prepared ahead of a rename), hold exactly data: written from offset 0
// over what it holds, the file made if needed, then cut to len(data);
// with durable, fsynced. Unlike a truncation to zero and a write (O_TRUNC),
// the blocks the file has are written over rather than freed and
// allocated again, which on ext4 also skips the flush a file truncated
// to zero gets when it is closed (auto_da_alloc): the write and its fsync
// cost about half as much for a baseline of 550 KB. A crash midway leaves
// a mix of the old and the new bytes, which is why no reader may read
// the file before the call returned.
func WriteOver(name string, perm os.FileMode, durable bool, data []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE, perm)
	if err != nil {
		return err
	}
	_, err = f.WriteAt(data, 0)
	if err == nil {
		var fi os.FileInfo
		if fi, err = f.Stat(); err == nil && fi.Size() != int64(len(data)) {
			err = f.Truncate(int64(len(data)))
		}
	}
	if err == nil && durable {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Exchange makes path hold what spare holds, atomically for every reader:
// when path is a regular file, the two are exchanged where the system can
// (spare then holds path's old content); otherwise spare is renamed over
// path (spare is then gone), which refuses as a rename does (path a
// directory, say: an exchange would swap it out of the way).
func Exchange(spare, path string) error {
	if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() {
		err := exchange(spare, path)
		if !errors.Is(err, errors.ErrUnsupported) {
			return err
		}
	}
	return os.Rename(spare, path)
}
