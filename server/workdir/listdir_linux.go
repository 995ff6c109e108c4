//go:build linux

package workdir

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// listDir appends to out the entries of the open directory d, with an
// lstat of each regular file,
// straight from getdents64 and fstatat(AT_SYMLINK_NOFOLLOW) relative to
// d's descriptor: the same system calls os.File.ReadDir makes inside a
// Root, without its per-entry FileInfo allocations. A no-op call on a
// large notebook is little more than this loop.
func listDir(d *os.File, out []dirEnt) ([]dirEnt, error) {
	sc, err := d.SyscallConn()
	if err != nil {
		return nil, err
	}
	var opErr error
	err = sc.Control(func(fd uintptr) { out, opErr = listFD(int(fd), out) })
	if err != nil {
		return nil, err
	}
	return out, opErr
}

// linux_dirent64: d_ino u64, d_off s64, d_reclen u16, d_type u8, d_name.
const direntNameOff = 19

// direntBufs recycles listFD's buffers: a scan lists a hundred
// directories, and 32 KiB each is 3 MB of fresh memory in a short process.
var direntBufs = sync.Pool{New: func() any { return new([32 << 10]byte) }}

func listFD(fd int, out []dirEnt) ([]dirEnt, error) {
	pooled := direntBufs.Get().(*[32 << 10]byte)
	defer direntBufs.Put(pooled)
	buf := pooled[:]
	var st unix.Stat_t
	for {
		n, err := syscall.ReadDirent(fd, buf)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "getdents", Path: ".", Err: err}
		}
		if n <= 0 {
			return out, nil
		}
		if cap(out) == 0 {
			out = make([]dirEnt, 0, n/24+1) // no record is shorter than 24 bytes: never regrown in the first batch
		}
		// One string per batch holds every name of it: the names are
		// substrings, not one allocation each.
		batch := string(buf[:n])
		for b := buf[:n]; len(b) >= direntNameOff; {
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < direntNameOff || reclen > len(b) {
				return nil, &fs.PathError{Op: "getdents", Path: ".", Err: syscall.EIO}
			}
			dtype := b[18]
			at := n - len(b) + direntNameOff // raw's offset in buf and batch
			raw := b[direntNameOff:reclen]
			b = b[reclen:]
			l := 0
			for l < len(raw) && raw[l] != 0 {
				l++
			}
			if (l == 1 && raw[0] == '.') || (l == 2 && raw[0] == '.' && raw[1] == '.') {
				continue
			}
			e := dirEnt{name: batch[at : at+l]}
			switch dtype {
			case syscall.DT_DIR:
				e.typ = fs.ModeDir
			case syscall.DT_LNK:
				e.typ = fs.ModeSymlink
			case syscall.DT_FIFO:
				e.typ = fs.ModeNamedPipe
			case syscall.DT_SOCK:
				e.typ = fs.ModeSocket
			case syscall.DT_CHR:
				e.typ = fs.ModeDevice | fs.ModeCharDevice
			case syscall.DT_BLK:
				e.typ = fs.ModeDevice
			case syscall.DT_REG, syscall.DT_UNKNOWN:
				if err := fstatat(fd, raw[:l+min(1, len(raw)-l)], &st); err != nil {
					if errors.Is(err, syscall.ENOENT) {
						continue // removed since the listing: not there
					}
					return nil, &fs.PathError{Op: "fstatat", Path: e.name, Err: err}
				}
				e.typ = modeType(st.Mode)
				if e.typ == 0 {
					e.shared = st.Nlink > 1
					e.st = Entry{Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(), Ino: uint64(st.Ino), Dev: uint64(st.Dev)}
				}
			default:
				e.typ = fs.ModeIrregular
			}
			out = append(out, e)
		}
	}
}

// fstatat is fstatat(AT_SYMLINK_NOFOLLOW) of name relative to fd; name
// is the name as the directory record holds it, with its terminating NUL
// when the record has one.
func fstatat(fd int, name []byte, st *unix.Stat_t) error {
	for {
		err := fstatatZ(fd, name, st)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// modeType maps st_mode's file type to fs.FileMode type bits.
func modeType(m uint32) fs.FileMode {
	switch m & syscall.S_IFMT {
	case syscall.S_IFREG:
		return 0
	case syscall.S_IFDIR:
		return fs.ModeDir
	case syscall.S_IFLNK:
		return fs.ModeSymlink
	case syscall.S_IFIFO:
		return fs.ModeNamedPipe
	case syscall.S_IFSOCK:
		return fs.ModeSocket
	case syscall.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFBLK:
		return fs.ModeDevice
	}
	return fs.ModeIrregular
}

// fstatatCopy is fstatat through unix.Fstatat (name without its NUL).
func fstatatCopy(fd int, name []byte, st *unix.Stat_t) error {
	if len(name) > 0 && name[len(name)-1] == 0 {
		name = name[:len(name)-1]
	}
	return unix.Fstatat(fd, string(name), st, unix.AT_SYMLINK_NOFOLLOW)
}

// rawDirs: a scan without a WatchedListings lists directories through raw
// descriptors (openSubdir, listFD).
const rawDirs = true

// fdOf is f's descriptor, without os.File.Fd's switch to blocking mode
// (f stays open, and owns it, for as long as it is used).
func fdOf(f *os.File) int {
	fd := -1
	if sc, err := f.SyscallConn(); err == nil {
		sc.Control(func(u uintptr) { fd = int(u) })
	}
	return fd
}

// openSubdir opens directory name of the directory open as parent, for
// listing: O_NOFOLLOW and O_DIRECTORY refuse a symlink or a file raced in
// at that name, and a name from a listing is one component, never "." or
// "..", so the descriptor is of a directory inside L, as os.Root ensures.
func openSubdir(parent int, name string) (int, error) {
	for {
		fd, err := unix.Openat(parent, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if !errors.Is(err, syscall.EINTR) {
			return fd, err
		}
	}
}

func closeFD(fd int) { unix.Close(fd) }
