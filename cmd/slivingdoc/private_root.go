package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// defaultPrivateRoot is <user state dir>/slivingdoc, or "" when unknown.
// P holds records that must not be lost (docs/local-state.md): the user
// cache directory, where earlier versions kept it, is emptied by cleaners.
// Records found there and not yet in the state directory are moved once
// (P's two folders, dirs/ and stores/, each one rename; the cache dir's
// other contents stay). If that fails, the old root is used where it is,
// so nothing is lost.
func defaultPrivateRoot() string {
	d, err := userStateDir()
	if err != nil {
		return ""
	}
	root := filepath.Join(d, "slivingdoc")
	c, err := os.UserCacheDir()
	if err != nil {
		return root
	}
	old := filepath.Join(c, "slivingdoc")
	if _, err := os.Stat(filepath.Join(old, "dirs")); err != nil {
		return root // nothing to move
	}
	if _, err := os.Lstat(filepath.Join(root, "dirs")); !errors.Is(err, fs.ErrNotExist) {
		return root // moved already (or both exist: the new one wins)
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return old
	}
	for _, name := range []string{"stores", "dirs"} { // dirs last: its presence says "moved"
		err := os.Rename(filepath.Join(old, name), filepath.Join(root, name))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return old
		}
	}
	return root
}

// userStateDir is the per-user directory for state that outlives a
// session and that cleaners leave alone: $XDG_STATE_HOME or
// ~/.local/state on Unix, the data directory elsewhere (Go's standard
// library has no state directory).
func userStateDir() (string, error) {
	switch runtime.GOOS {
	case "windows", "darwin", "ios", "plan9":
		return userDataDir()
	}
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return d, nil // a relative XDG_STATE_HOME is invalid and ignored
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "state"), nil
}
