package workdir

import "io/fs"

// dirEnt is one entry of a directory listing: its name, its type bits
// (0 for a regular file, as fs.FileMode.Type) and, for a regular file, the
// stat fields the stat cache compares.
type dirEnt struct {
	name string
	typ  fs.FileMode
	st   Entry
	// shared: the file has other hard links, through which it can change
	// without an event on this directory's watch (server/dirstate/memory.go).
	shared bool
}
