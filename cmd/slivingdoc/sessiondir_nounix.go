//go:build !unix

package main

import (
	"errors"
	"os"
)

// ownPrivateDir accepts path only as a real directory (not a symlink); the
// per-user temporary directory keeps other users out.
func ownPrivateDir(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return errors.New("not a directory")
	}
	return nil
}
