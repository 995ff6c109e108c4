//go:build linux

package workdir

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"slices"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// watch is one inotify instance watching directories of one L.
type watch struct{ fd int }

// watchMask is every change to a directory's entries, to the files in it
// (content, size, times, mode, links) and to the directory itself.
const watchMask = unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE | unix.IN_CREATE | unix.IN_DELETE |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR

// localFS reports the file systems whose every change passes through this
// kernel (so inotify sees it); network and FUSE file systems are not. A
// switch rather than a map, which package init would build in every
// process.
func localFS(fsType int64) bool {
	switch fsType {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC,
		unix.TMPFS_MAGIC, unix.F2FS_SUPER_MAGIC, unix.OVERLAYFS_SUPER_MAGIC,
		0x2fc12fc1: // zfs
		return true
	}
	return false
}

// newWatch starts watching for L (root). ok is false where no watch can
// ever be had (a file system inotify does not fully see); err is a
// failure that may pass (the per-user instance limit).
func newWatch(root *os.Root) (w *watch, ok bool, err error) {
	d, err := root.Open(".")
	if err != nil {
		return nil, true, err
	}
	defer d.Close()
	var sfs unix.Statfs_t
	if err := fdCall(d, func(fd int) error { return unix.Fstatfs(fd, &sfs) }); err != nil {
		return nil, true, err
	}
	if !localFS(int64(sfs.Type)) {
		return nil, false, nil
	}
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, true, err
	}
	return &watch{fd: fd}, true, nil
}

func (w *watch) close() { unix.Close(w.fd) }

// add watches the open directory f and returns the watch's identity (the
// same for the same directory, wherever it is reached from).
func (w *watch) add(f *os.File) (int32, bool) {
	var wd int
	err := fdCall(f, func(fd int) error {
		var err error
		wd, err = unix.InotifyAddWatch(w.fd, "/proc/self/fd/"+strconv.Itoa(fd), watchMask)
		return err
	})
	if err != nil {
		return 0, false
	}
	return int32(wd), true
}

// contentOnly are the events that say a file's content or attributes
// changed (written, truncated, closed after writing, chmod-ed, touched,
// its link count changed) but not which entries its directory holds.
const contentOnly = unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE

// drain reads every queued event and calls ev with the watch each names
// (-1: the queue overflowed, everything is suspect) and, for an event that
// only says the content of the non-directory name in it changed, that
// name; name is "" for every other event (an entry created, removed or
// moved in or out, a subdirectory's attributes, the directory's own
// attributes, its removal or move, the watch's end), which may change the
// directory's entries. It reports false when the queue cannot be read.
func (w *watch) drain(ev func(wd int32, name string)) bool {
	var buf [16 << 10]byte
	for {
		n, err := unix.Read(w.fd, buf[:])
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if errors.Is(err, syscall.EAGAIN) {
			return true
		}
		if err != nil || n <= 0 {
			return false
		}
		// struct inotify_event: i32 wd, u32 mask, u32 cookie, u32 len, name.
		for b := buf[:n]; len(b) >= unix.SizeofInotifyEvent; {
			wd := int32(binary.NativeEndian.Uint32(b[0:4]))
			mask := binary.NativeEndian.Uint32(b[4:8])
			size := unix.SizeofInotifyEvent + int(binary.NativeEndian.Uint32(b[12:16]))
			if size > len(b) {
				return false
			}
			raw := b[unix.SizeofInotifyEvent:size] // the name, NUL-padded (none for the directory itself)
			b = b[size:]
			if mask&unix.IN_Q_OVERFLOW != 0 {
				ev(-1, "")
				continue
			}
			name := ""
			if mask&^contentOnly == 0 { // (IN_ISDIR is outside contentOnly)
				if l := bytes.IndexByte(raw, 0); l >= 0 {
					raw = raw[:l]
				}
				name = string(raw)
			}
			ev(wd, name)
		}
	}
}

// restat re-stats, in the directory open as r, the files named by
// content-only events since ents was listed, and puts their new stats in
// ents. It reports false when the listing cannot stand as it is: a name
// it does not hold as a regular file, a name that is no longer one, or
// one with other hard links now (then the directory is listed afresh).
func restat(r *os.Root, ents []dirEnt, names []string) bool {
	for _, name := range names {
		i := slices.IndexFunc(ents, func(e dirEnt) bool { return e.name == name })
		if i < 0 || ents[i].typ != 0 {
			return false
		}
		fi, err := r.Lstat(name)
		if err != nil {
			return false
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok || modeType(st.Mode) != 0 || st.Nlink > 1 {
			return false
		}
		ents[i].st = Entry{Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(), Ino: uint64(st.Ino), Dev: uint64(st.Dev)}
	}
	return true
}

// fdCall runs fn with f's descriptor.
func fdCall(f *os.File, fn func(fd int) error) error {
	sc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := sc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}
