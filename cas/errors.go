package cas

import (
	"errors"
	"fmt"
)

var (
	// ErrNotFound: the source does not hold the object.
	ErrNotFound = errors.New("cas: object not found")
	// ErrCorrupt: bytes that fail a checksum, an ID check or a decode rule.
	ErrCorrupt = errors.New("cas: corrupt data")
	// ErrTruncated: a pack shorter than its header declares (or shorter
	// than a header). It is also ErrCorrupt.
	ErrTruncated = fmt.Errorf("%w: truncated pack", ErrCorrupt)
	// ErrUnsupportedVersion: a pack written by a format version this
	// release cannot read. It is also ErrCorrupt, because the bytes cannot
	// be used, but callers may tell the user to upgrade instead.
	ErrUnsupportedVersion = fmt.Errorf("%w: unsupported pack format version", ErrCorrupt)
	// ErrEmptyPack: Finish on a PackWriter with no objects; an empty pack
	// is never written (and refused on read as corrupt).
	ErrEmptyPack = errors.New("cas: empty pack")
	// ErrInvalidPath: a path given to WriteTree that cannot be a tree path
	// (empty segment, ".", "..", NUL, or a file that is also a directory).
	ErrInvalidPath = errors.New("cas: invalid tree path")
	// ErrInvalidObject: an object handed to a Sink or encoder that breaks
	// the canonical rules (wrong ID, bad structure). Unlike ErrCorrupt it
	// names a caller mistake, not damaged storage.
	ErrInvalidObject = errors.New("cas: invalid object")
	// ErrStoreClosed: a call on a Store after Close.
	ErrStoreClosed = errors.New("cas: store is closed")
)

// corruptf returns an error wrapping ErrCorrupt.
func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}
