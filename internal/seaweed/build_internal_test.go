package seaweed

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Parallel test binaries serialise their builds on the lock file: a second
// holder waits until the first lets go.
func TestLockFileExcludes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "build.lock")
	unlock, err := lockFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan struct{})
	go func() {
		unlock2, err := lockFile(path)
		if err != nil {
			t.Error(err)
		} else {
			unlock2()
		}
		close(got)
	}()
	select {
	case <-got:
		t.Fatal("a second holder got the lock while the first held it")
	case <-time.After(200 * time.Millisecond):
	}
	unlock()
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the lock was not handed over after unlock")
	}
}

// The module cache is read-only; the copy the build runs in must not be.
func TestCopyTreeMakesWritableCopy(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "copy")
	if err := os.MkdirAll(filepath.Join(src, "weed", "cmd"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, mode := range map[string]os.FileMode{"go.mod": 0o444, "weed/cmd/main.go": 0o444, "weed/run.sh": 0o555} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(name), mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := copyTree(src, dst); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]os.FileMode{"go.mod": 0o644, "weed/cmd/main.go": 0o644, "weed/run.sh": 0o755} {
		p := filepath.Join(dst, name)
		data, err := os.ReadFile(p)
		if err != nil || string(data) != name {
			t.Fatalf("%s copied as %q, %v", name, data, err)
		}
		info, _ := os.Stat(p)
		if info.Mode().Perm() != want {
			t.Fatalf("%s has mode %v, want %v", name, info.Mode().Perm(), want)
		}
	}
}

// A prebuilt binary that is not there is an error naming the setting, not
// a silent fallback and not a skip.
func TestPrebuiltBinaryMustExist(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "weed")
	t.Setenv(EnvBinary, missing)
	_, err := findOrBuild(io.Discard)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), EnvBinary) {
		t.Fatalf("findOrBuild = %v, want a not-exist error naming %s", err, EnvBinary)
	}
	if err := os.WriteFile(missing, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := findOrBuild(io.Discard); err == nil {
		t.Fatal("a file without execute permission was accepted as weed")
	}
}
