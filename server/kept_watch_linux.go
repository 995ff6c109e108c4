//go:build linux

package server

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// watchKept returns a channel that receives after a file named like path
// was renamed into place or written in its directory (a holder's new kept
// state), and the function that ends the watch; a nil channel when the
// directory cannot be watched (the caller polls). inotify: a writer
// waiting for its turn reacts to the holder's publication at once
// instead of waking every few milliseconds, which cost a waiting CLI
// process tens of milliseconds of CPU per commit on 2 cores.
func watchKept(path string) (<-chan struct{}, func()) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, func() {}
	}
	if _, err := unix.InotifyAddWatch(fd, filepath.Dir(path), unix.IN_MOVED_TO|unix.IN_CLOSE_WRITE); err != nil {
		_ = unix.Close(fd)
		return nil, func() {}
	}
	f := os.NewFile(uintptr(fd), "inotify") // non-blocking: Read waits in the poller, Close ends it
	moved := make(chan struct{}, 1)
	name := []byte(filepath.Base(path))
	go func() {
		buf := make([]byte, 64*(unix.SizeofInotifyEvent+unix.NAME_MAX+1))
		for {
			n, err := f.Read(buf)
			if err != nil {
				return
			}
			for off := 0; off+unix.SizeofInotifyEvent <= n; {
				size := int(binary.NativeEndian.Uint32(buf[off+12 : off+16])) // the name's length (struct inotify_event.len)
				start := off + unix.SizeofInotifyEvent
				off = start + size
				if off <= n && bytes.Equal(bytes.TrimRight(buf[start:off], "\x00"), name) {
					select {
					case moved <- struct{}{}:
					default:
					}
				}
			}
		}
	}()
	return moved, func() { _ = f.Close() }
}
