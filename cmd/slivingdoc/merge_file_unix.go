//go:build unix

package main

import "syscall"

// readRegular reads the regular file at path with plain system calls
// (open, fstat, read, close), reporting false on any failure or if path is
// not a regular file; the open does not wait (O_NONBLOCK, which reads of a
// regular file ignore), so a FIFO put in a file's place since the caller
// looked is reported false at once rather than waited on here.
// os.ReadFile would also work, at a price a three-line merge notices: on
// Linux os.Open offers every file to the runtime's network poller, whose
// first use creates an epoll instance and an eventfd, and each file then
// costs a refused epoll_ctl and four fcntl calls besides a finalizer;
// about 20 system calls for the three inputs.
func readRegular(path string) ([]byte, bool) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, false
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, false
	}
	// One byte more than the size, so that a file that did not change is
	// read with no second buffer: the read that finds its end has room.
	b := make([]byte, 0, int(st.Size)+1)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := syscall.Read(fd, b[len(b):cap(b)])
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return nil, false
		case n == 0:
			return b, true
		}
		b = b[:len(b)+n]
	}
}
