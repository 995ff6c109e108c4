package osfile

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
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
