//go:build unix

package main

import (
	"errors"
	"os"
	"syscall"
)

// ownPrivateDir accepts path only as a real directory (not a symlink) of
// this user that no one else may enter.
func ownPrivateDir(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return errors.New("not a directory")
	case !ok || int(st.Uid) != os.Getuid():
		return errors.New("owned by another user")
	case fi.Mode().Perm()&0o077 != 0:
		return errors.New("open to other users")
	}
	return nil
}
