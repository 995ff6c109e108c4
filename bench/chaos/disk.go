//go:build unix

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

// smallDisk is a tmpfs of a few MB that holds one writer's private root,
// so that "disk full" is the real ENOSPC of a real file system rather than
// an imitation. Mounting needs root (or CAP_SYS_ADMIN); where that is
// refused the campaign leaves the disk-full fault out and says so.
type smallDisk struct {
	dir    string
	filler string
}

// mountSmallDisk mounts a tmpfs of sizeMB at dir.
func mountSmallDisk(dir string, sizeMB int) (*smallDisk, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%dm,mode=0700", sizeMB), "tmpfs", dir).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("mount -t tmpfs: %v: %s", err, bytes.TrimSpace(out))
	}
	return &smallDisk{dir: dir, filler: filepath.Join(dir, "filler")}, nil
}

// fill takes every free block; it returns nil only when a write was
// refused with ENOSPC, the proof that the disk is full.
func (d *smallDisk) fill() error {
	f, err := os.OpenFile(d.filler, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	block := make([]byte, 256<<10)
	for size := len(block); size > 0; {
		_, err := f.Write(block[:size])
		switch {
		case errors.Is(err, syscall.ENOSPC):
			size /= 2 // top up the last partial block
		case err != nil:
			return err
		}
	}
	// Even a byte is refused now.
	if _, err := f.Write([]byte{0}); !errors.Is(err, syscall.ENOSPC) {
		return fmt.Errorf("disk not full after filling: %v", err)
	}
	return nil
}

// free gives the space back.
func (d *smallDisk) free() error {
	err := os.Remove(d.filler)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// unmount removes the tmpfs (and everything on it).
func (d *smallDisk) unmount() error {
	out, err := exec.Command("umount", d.dir).CombinedOutput()
	if err != nil {
		return fmt.Errorf("umount: %v: %s", err, bytes.TrimSpace(out))
	}
	return nil
}
