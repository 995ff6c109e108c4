//go:build linux

package workdir

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The rewrite of L replaces each file through a new temporary sibling
// renamed over it: one new inode per file, and the old one freed. The
// alternative measured here keeps one spare file per directory and swaps
// it with each target (renameat2 RENAME_EXCHANGE); the swapped-out inode,
// which held the target's old content, becomes the spare for the next
// file, so a directory of N rewritten files allocates one inode, not N.
//
// It is a benchmark, not the product's code, because reusing an inode that
// was visible under a user's file name breaks what the rename keeps: a
// reader that opened the old file before the swap reads another file's
// content after it (not the old content whole), a late write by an editor
// that still holds the old file lands in the next file's content, a hard
// link to the old file changes content, and the old file's owner and
// extended attributes move to another path. The exchange variant below
// pays for the checks that would make reuse safe against all but the last
// (a write lease, which the kernel grants only when no other process holds
// the file open, a link count of 1, and our own user as the owner), to
// show what is left of the gain once they are paid.
//
// Durability decides the comparison. WriteFiles stages every new content,
// flushes them all at once (syncfs, from syncfsMin files), then renames:
// no rename can expose content that a crash would lose. The exchange
// cannot stage ahead (the spare for a file is the inode the previous swap
// freed), so to keep that guarantee it flushes each spare before its swap
// (fdatasync); "exchange-unflushed" drops that flush to show what the
// inode reuse alone saves, and would let a crash leave a target empty.
// SLIVINGDOC_BENCH_SHM=1 adds the same runs on /dev/shm (tmpfs) beside
// those in the test's temporary directory.
func BenchmarkRewriteFiles(b *testing.B) {
	const files, size = 100, 2 << 10
	dirs := []struct{ name, base string }{{"tmpdir", ""}}
	if os.Getenv("SLIVINGDOC_BENCH_SHM") == "1" {
		dirs = append(dirs, struct{ name, base string }{"shm", "/dev/shm"})
	}
	for _, d := range dirs {
		for _, v := range []struct {
			name    string
			rewrite func(b *testing.B, dir *os.File, names []string, content [][]byte)
		}{{"rename", rewriteByRename}, {"exchange", rewriteByExchange}, {"exchange-unflushed", rewriteByExchangeUnflushed}} {
			b.Run(fmt.Sprintf("fs=%s/via=%s", d.name, v.name), func(b *testing.B) {
				base := d.base
				if base == "" {
					base = b.TempDir()
				}
				dir, err := os.MkdirTemp(base, "rewrite-bench-")
				if err != nil {
					b.Fatal(err)
				}
				defer os.RemoveAll(dir)
				names := make([]string, files)
				for i := range names {
					names[i] = "note-" + strconv.Itoa(i) + ".md"
					if err := os.WriteFile(filepath.Join(dir, names[i]), make([]byte, size), 0o644); err != nil {
						b.Fatal(err)
					}
				}
				df, err := os.Open(dir)
				if err != nil {
					b.Fatal(err)
				}
				defer df.Close()
				// Two contents alternate so that every round changes every file.
				contents := [2][][]byte{}
				for k := range contents {
					for i := range files {
						c := make([]byte, size)
						for j := range c {
							c[j] = byte('a' + (i+j+k)%26)
						}
						contents[k] = append(contents[k], c)
					}
				}
				// The CPU this thread spends is reported beside the time: on a
				// shared disk the flushes' wall time is mostly other writers'.
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				round := 0
				var cpu time.Duration
				for b.Loop() {
					before := threadCPU(b)
					v.rewrite(b, df, names, contents[round%2])
					cpu += threadCPU(b) - before
					round++
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*files), "ns/file")
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*files), "cpu-ns/file")
				// Every file holds the last round's content, and nothing else
				// is left in the directory.
				last := contents[(round-1)%2]
				for i, n := range names {
					got, err := os.ReadFile(filepath.Join(dir, n))
					if err != nil || string(got) != string(last[i]) {
						b.Fatalf("%s after the rewrite: %d bytes, err %v", n, len(got), err)
					}
				}
				if ents, _ := os.ReadDir(dir); len(ents) != files {
					b.Fatalf("%d entries after the rewrite, want %d", len(ents), files)
				}
			})
		}
	}
}

// threadCPU is the user and system CPU time of the calling thread.
func threadCPU(b *testing.B) time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

var benchTmpSeq int

func benchTempName() string {
	benchTmpSeq++
	return fmt.Sprintf("%s%016x.tmp", TempPrefix, benchTmpSeq)
}

// rewriteByRename is today's way (WriteFiles with at least syncfsMin
// files): a new temporary sibling per file, one flush of the file system,
// each renamed over its target, the directory flushed.
func rewriteByRename(b *testing.B, dir *os.File, names []string, content [][]byte) {
	dfd := int(dir.Fd())
	tmps := make([]string, len(names))
	for i := range names {
		tmps[i] = benchTempName()
		fd, err := unix.Openat(dfd, tmps[i], unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o644)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := unix.Write(fd, content[i]); err != nil {
			b.Fatal(err)
		}
		unix.Close(fd)
	}
	if err := unix.Syncfs(dfd); err != nil {
		b.Fatal(err)
	}
	for i, name := range names {
		if err := unix.Renameat(dfd, tmps[i], dfd, name); err != nil {
			b.Fatal(err)
		}
	}
	if err := unix.Fsync(dfd); err != nil {
		b.Fatal(err)
	}
}

func rewriteByExchange(b *testing.B, dir *os.File, names []string, content [][]byte) {
	exchangeFiles(b, dir, names, content, true)
}

func rewriteByExchangeUnflushed(b *testing.B, dir *os.File, names []string, content [][]byte) {
	exchangeFiles(b, dir, names, content, false)
}

// exchangeFiles swaps a spare with each target and reuses the swapped-out
// inode as the next spare when no other process holds it open (a write
// lease is granted) and no other name links to it; otherwise it is removed
// and a new spare created. flush: each spare's data is flushed before its
// swap. The last spare is removed and the directory flushed.
func exchangeFiles(b *testing.B, dir *os.File, names []string, content [][]byte, flush bool) {
	dfd := int(dir.Fd())
	spare := ""
	for i, name := range names {
		fd := -1
		if spare != "" {
			f, err := unix.Openat(dfd, spare, unix.O_WRONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
			if err != nil {
				b.Fatal(err)
			}
			var st unix.Stat_t
			if err := unix.Fstat(f, &st); err != nil {
				b.Fatal(err)
			}
			_, lerr := unix.FcntlInt(uintptr(f), unix.F_SETLEASE, unix.F_WRLCK)
			if lerr == nil && st.Nlink == 1 && st.Uid == uint32(os.Geteuid()) {
				fd = f
				if err := unix.Ftruncate(fd, 0); err != nil {
					b.Fatal(err)
				}
			} else {
				if lerr == nil {
					unix.FcntlInt(uintptr(f), unix.F_SETLEASE, unix.F_UNLCK)
				}
				unix.Close(f)
				unix.Unlinkat(dfd, spare, 0)
				spare = ""
			}
		}
		if fd < 0 {
			spare = benchTempName()
			var err error
			fd, err = unix.Openat(dfd, spare, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o644)
			if err != nil {
				b.Fatal(err)
			}
		}
		if _, err := unix.Pwrite(fd, content[i], 0); err != nil {
			b.Fatal(err)
		}
		if flush {
			if err := unix.Fdatasync(fd); err != nil {
				b.Fatal(err)
			}
		}
		if err := unix.Renameat2(dfd, spare, dfd, name, unix.RENAME_EXCHANGE); err != nil {
			b.Fatal(err)
		}
		unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_UNLCK)
		unix.Close(fd)
	}
	if spare != "" {
		if err := unix.Unlinkat(dfd, spare, 0); err != nil {
			b.Fatal(err)
		}
	}
	if err := unix.Fsync(dfd); err != nil {
		b.Fatal(err)
	}
}
