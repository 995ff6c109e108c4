package osfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/osfile"
)

// Two opens of one lock file exclude each other, even in one process;
// Release lets the next holder in, and a waiting Acquire gets it then.
func TestLockExcludes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	first, err := osfile.Acquire(path, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if l, err := osfile.TryAcquire(path, 0o600); !errors.Is(err, osfile.ErrLocked) {
		l.Release()
		t.Fatalf("TryAcquire while held: %v, want ErrLocked", err)
	}
	got := make(chan error, 1)
	go func() {
		l, err := osfile.Acquire(path, 0o600)
		if err == nil {
			err = l.Release()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("Acquire returned while the lock was held: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("Acquire after release: %v", err)
	}
	if err := first.Release(); err != nil {
		t.Fatalf("second Release: %v", err)
	}
}

// Shared locks: many holders at once, none while an exclusive holder has
// the file; every waiter gets its shared lock when the exclusive holder
// lets go (the broadcast server/turns.go relies on), and an exclusive
// lock waits for the shared holders.
func TestLockShared(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := osfile.AcquireShared(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := osfile.AcquireShared(path)
	if err != nil {
		t.Fatalf("a second shared lock: %v", err)
	}
	if l, err := osfile.TryAcquire(path, 0o600); !errors.Is(err, osfile.ErrLocked) {
		l.Release()
		t.Fatalf("TryAcquire while shared holders have it: %v, want ErrLocked", err)
	}
	a.Release()
	b.Release()
	ex, err := osfile.Acquire(path, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	const waiters = 3
	got := make(chan error, waiters)
	for range waiters {
		go func() {
			l, err := osfile.AcquireShared(path)
			if err == nil {
				err = l.Release()
			}
			got <- err
		}()
	}
	select {
	case err := <-got:
		t.Fatalf("a shared lock while the exclusive holder has it: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	ex.Release()
	for range waiters {
		if err := <-got; err != nil {
			t.Fatalf("a shared waiter after the release: %v", err)
		}
	}
}

func isUnix() bool {
	switch runtime.GOOS {
	case "js", "wasip1", "plan9", "windows":
		return false
	}
	return true
}

// WriteFile replaces the content and leaves no temporary file, durable or
// not; a failed write leaves the old content and no temporary file.
func TestWriteFileReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state")
	for i, durable := range []bool{true, false} {
		want := strings.Repeat("x", i+1)
		if err := osfile.WriteFile(path, 0o600, durable, []byte(want[:1]), []byte(want[1:])); err != nil {
			t.Fatal(err)
		}
		if data, err := os.ReadFile(path); err != nil || string(data) != want {
			t.Fatalf("durable=%v: read %q, %v; want %q", durable, data, err, want)
		}
	}
	// A directory where the file goes: the rename fails.
	blocked := filepath.Join(dir, "blocked")
	if err := os.MkdirAll(filepath.Join(blocked, "child"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := osfile.WriteFile(blocked, 0o600, true, []byte("y")); err == nil {
		t.Fatal("WriteFile over a non-empty directory succeeded")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), osfile.TempSuffix) {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
	if len(entries) != 2 {
		t.Errorf("directory holds %d entries, want the file and the directory", len(entries))
	}
}

// Overwrite keeps the file (its inode) while the length stays, and
// replaces it when the length changes or the file is new.
func TestOverwriteKeepsTheFileOfSameLength(t *testing.T) {
	path := filepath.Join(t.TempDir(), "record")
	write := func(content string) os.FileInfo {
		t.Helper()
		if err := osfile.Overwrite(path, 0o600, []byte(content)); err != nil {
			t.Fatal(err)
		}
		if data, err := os.ReadFile(path); err != nil || string(data) != content {
			t.Fatalf("read %q, %v; want %q", data, err, content)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi
	}
	first := write("0001\n")
	if first.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", first.Mode().Perm())
	}
	if same := write("0002\n"); !os.SameFile(first, same) {
		t.Error("a record of the same length was replaced, not overwritten")
	}
	if longer := write("00003\n"); os.SameFile(first, longer) {
		t.Error("a longer record was written over the old file, not replaced")
	}
}

// WriteSpare replaces the target's content for every reader, and on
// Linux the two files only swap inodes: after the first two writes, no
// write creates a file (the spare holds the old content, the next write
// overwrites it). A missing target is created; a missing spare is made.
func TestWriteSpareReusesTwoFiles(t *testing.T) {
	dir := t.TempDir()
	path, spare := filepath.Join(dir, "record"), filepath.Join(dir, ".record.spare")
	var seen []os.FileInfo
	for i, content := range []string{"first\n", "the second, longer\n", "3\n", "fourth\n"} {
		if err := osfile.WriteSpare(path, spare, 0o600, i%2 == 0, []byte(content)); err != nil {
			t.Fatal(err)
		}
		if data, err := os.ReadFile(path); err != nil || string(data) != content {
			t.Fatalf("write %d: read %q, %v; want %q", i, data, err, content)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("mode %v, want 0600", fi.Mode().Perm())
		}
		seen = append(seen, fi)
	}
	if runtime.GOOS != "linux" {
		return
	}
	if !os.SameFile(seen[0], seen[2]) || !os.SameFile(seen[1], seen[3]) || os.SameFile(seen[0], seen[1]) {
		t.Error("the writes did not alternate between two files")
	}
	if data, err := os.ReadFile(spare); err != nil || string(data) != "3\n" {
		t.Errorf("the spare holds %q, %v; want the content before the last write", data, err)
	}
	// A directory in the target's place is not swapped out of the way.
	other := filepath.Join(dir, "taken")
	if err := os.MkdirAll(filepath.Join(other, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := osfile.WriteSpare(other, spare, 0o600, false, []byte("no\n")); err == nil {
		t.Error("a write over a directory succeeded")
	}
	if fi, err := os.Stat(other); err != nil || !fi.IsDir() {
		t.Errorf("the directory was replaced: %v", err)
	}
}

// WriteOver leaves exactly the bytes given, whether the file held more,
// fewer or none, and writes over the file it finds (the same inode: no
// file is created once it exists).
func TestWriteOverLeavesExactlyData(t *testing.T) {
	name := filepath.Join(t.TempDir(), ".spare")
	var first os.FileInfo
	for i, content := range []string{"a longer first content\n", "short\n", "", "longer again, longer than all\n"} {
		if err := osfile.WriteOver(name, 0o600, i%2 == 0, []byte(content)); err != nil {
			t.Fatal(err)
		}
		if data, err := os.ReadFile(name); err != nil || string(data) != content {
			t.Fatalf("write %d: read %q, %v; want %q", i, data, err, content)
		}
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("mode %v, want 0600", fi.Mode().Perm())
		}
		if first == nil {
			first = fi
		} else if !os.SameFile(first, fi) {
			t.Errorf("write %d replaced the file instead of writing over it", i)
		}
	}
}

func TestSyncDir(t *testing.T) {
	if err := osfile.SyncDir(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if err := osfile.SyncDir(filepath.Join(t.TempDir(), "missing")); err == nil && isUnix() {
		t.Fatal("SyncDir of a missing directory succeeded")
	}
}

// AcquireExisting and AcquireShared lock a file only if it exists: a
// thread that locks late, after its directory was cleaned, must not bring
// the file back (server/turns.go's .turn).
func TestLockExistingNeverCreates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "turn")
	if l, err := osfile.AcquireExisting(path); !errors.Is(err, os.ErrNotExist) {
		l.Release()
		t.Fatalf("AcquireExisting of a missing file: %v, want ErrNotExist", err)
	}
	if l, err := osfile.AcquireShared(path); !errors.Is(err, os.ErrNotExist) {
		l.Release()
		t.Fatalf("AcquireShared of a missing file: %v, want ErrNotExist", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the file was created: %v", err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ex, err := osfile.AcquireExisting(path)
	if err != nil {
		t.Fatal(err)
	}
	if l, err := osfile.TryAcquire(path, 0o600); !errors.Is(err, osfile.ErrLocked) {
		l.Release()
		t.Fatalf("TryAcquire while AcquireExisting holds it: %v, want ErrLocked", err)
	}
	ex.Release()
}
