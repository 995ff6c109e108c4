package workdir

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"

	"github.com/slivingdoc/slivingdoc/internal/crashpoint"
	"github.com/slivingdoc/slivingdoc/internal/osfile"
	"github.com/slivingdoc/slivingdoc/internal/parallel"
)

// Crash points (internal/crashpoint) of L's rewrite. The temporary files
// staged in parallel are not state (a scan skips them), so the points sit
// in the sequential steps that change what L holds: each rename, each
// removal, each directory made (the directories' fsyncs are osfile's).
var (
	cpStage  = crashpoint.Register("workdir.stage")
	cpRename = crashpoint.Register("workdir.rename")
	cpRemove = crashpoint.Register("workdir.remove")
	cpMkdir  = crashpoint.Register("workdir.mkdir")
)

// writeParallel bounds concurrent file writes: enough for the file
// system to group their fsyncs into few journal commits.
const writeParallel = 8

// Write is one file to write into L: its new content, and its stat when
// it was scanned (nil: it was absent), which it must still have.
type Write struct {
	Path    string // notebook-relative, '/'-separated
	Content []byte
	Was     *Entry
}

// WriteFiles writes every file of writes into L (root), each through a
// temporary sibling renamed over its target after checking that nobody
// changed the target since the scan (else ErrChangedDuringScan). Each
// directory is opened once and files are written by a few workers in
// parallel; after each rename, written(i, stat of the new file) is called
// (an error from it stops the writes); the directories are fsynced at the
// end so the renames are durable before the caller records a baseline.
func WriteFiles(root *os.Root, writes []Write, written func(i int, st Entry) error) error {
	dirs := map[string]*os.Root{}
	for _, c := range writes {
		dirs[path.Dir(c.Path)] = nil
	}
	defer func() {
		for d, r := range dirs {
			if r != nil && d != "." {
				r.Close()
			}
		}
	}()
	crashpoint.Hit(cpStage, "")
	for _, d := range slices.Sorted(maps.Keys(dirs)) {
		r, err := openWriteDir(root, d)
		if err != nil {
			return err
		}
		dirs[d] = r
	}
	// Phase 1, in parallel: each new content goes to a temporary sibling.
	// With many files one syncfs replaces a fsync per file (whose journal
	// commits would serialise the creates).
	batch := len(writes) >= syncfsMin && CanSyncFS
	tmps := make([]string, len(writes))
	defer func() {
		for i, t := range tmps {
			if t != "" {
				dirs[path.Dir(writes[i].Path)].Remove(t)
			}
		}
	}()
	// Workers take whole directories: creates in one directory serialise
	// on its lock in the kernel, and contending for it only burns CPU.
	var groups [][]int
	byDir := map[string]int{}
	for i, c := range writes {
		d := path.Dir(c.Path)
		g, ok := byDir[d]
		if !ok {
			g = len(groups)
			byDir[d] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	err := parallel.For(len(groups), writeParallel, func(g int) error {
		for _, i := range groups[g] {
			c := &writes[i]
			tmp, err := stageLeaf(dirs[path.Dir(c.Path)], path.Base(c.Path), c.Content, c.Was, !batch)
			tmps[i] = tmp
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if batch {
		if err := SyncFS(root); err != nil {
			return err
		}
	}
	// Phase 2: rename each over its target, checking first that nobody
	// changed the target since the scan.
	for i, c := range writes {
		r := dirs[path.Dir(c.Path)]
		name := path.Base(c.Path)
		if _, err := unchangedSince(r, name, c.Was); err != nil {
			return err
		}
		crashpoint.Hit(cpRename, c.Path)
		if err := r.Rename(tmps[i], name); err != nil {
			return err
		}
		tmps[i] = ""
		fi, err := r.Lstat(name)
		if err != nil {
			return err
		}
		if err := written(i, StatOf(fi)); err != nil {
			return err
		}
	}
	for _, r := range dirs {
		if err := syncRootDir(r); err != nil {
			return err
		}
	}
	return nil
}

// syncfsMin is the number of files from which one file-system flush is
// cheaper than a fsync per file.
const syncfsMin = 16

// openWriteDir opens (creating) directory d of L for writing files into.
func openWriteDir(root *os.Root, d string) (*os.Root, error) {
	if d == "." {
		return root, nil
	}
	crashpoint.Hit(cpMkdir, d)
	if err := root.MkdirAll(d, 0o777); err != nil {
		return nil, err
	}
	return root.OpenRoot(d)
}

// RemoveFile removes file p of L, which must still have the stat it had
// when scanned (was; else ErrChangedDuringScan), and the directories its
// removal empties (never L itself).
func RemoveFile(root *os.Root, p string, was *Entry) error {
	if _, err := unchangedSince(root, p, was); err != nil {
		return err
	}
	crashpoint.Hit(cpRemove, p)
	if err := root.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	pruneEmpty(root, path.Dir(p))
	return nil
}

// unchangedSince refuses to replace or remove a file that someone changed
// (or created) after the scan: the rewrite would otherwise drop that edit.
// The caller turns the error into a recovery, which merges the edit in.
// It returns what stands at name (nil: nothing).
func unchangedSince(r *os.Root, name string, was *Entry) (fs.FileInfo, error) {
	fi, err := r.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, err
	case !fi.Mode().IsRegular():
		if was != nil {
			return nil, ErrChangedDuringScan
		}
		return fi, nil // an empty directory, not state (stageLeaf removes it)
	case was == nil || !SameStat(StatOf(fi), *was):
		return nil, ErrChangedDuringScan
	}
	return fi, nil
}

// stageLeaf writes content to a new temporary sibling of name in r (with
// the permissions of the file it will replace) and returns its name. It
// fsyncs the file unless the caller flushes the file system afterwards.
func stageLeaf(r *os.Root, name string, content []byte, was *Entry, fsync bool) (string, error) {
	fi, err := unchangedSince(r, name, was)
	if err != nil {
		return "", err
	}
	perm := fs.FileMode(0o666)
	if fi != nil {
		switch {
		case fi.Mode().IsRegular():
			perm = fi.Mode().Perm()
		case fi.IsDir():
			// An empty directory (not state) stands where a file goes.
			if err := r.Remove(name); err != nil {
				return "", err
			}
		}
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := TempPrefix + hex.EncodeToString(rnd[:]) + ".tmp"
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return "", err
	}
	_, err = f.Write(content)
	if err == nil && fsync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		r.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

// pruneEmpty removes dir and its parents while they are empty (never L).
func pruneEmpty(root *os.Root, dir string) {
	for dir != "." && dir != "/" && dir != "" {
		if root.Remove(dir) != nil {
			return
		}
		dir = path.Dir(dir)
	}
}

// syncRootDir makes the renames in directory r durable.
func syncRootDir(r *os.Root) error {
	d, err := r.Open(".")
	if err != nil {
		return err
	}
	return osfile.SyncOpenDir(d)
}
