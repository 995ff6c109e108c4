package cas

import (
	"fmt"

	"github.com/slivingdoc/slivingdoc/internal/noinit"
)

// The sentinels are static data (internal/noinit): declaring them costs a
// process nothing before main.
const errCorrupt noinit.Error = "cas: corrupt data"

var (
	// ErrNotFound: the source does not hold the object.
	ErrNotFound error = noinit.Error("cas: object not found")
	// ErrCorrupt: bytes that fail a checksum, an ID check or a decode rule.
	ErrCorrupt error = errCorrupt
	// ErrTruncated: a pack shorter than its header declares (or shorter
	// than a header). It is also ErrCorrupt.
	ErrTruncated error = &noinit.Wrapped{Msg: "cas: corrupt data: truncated pack", Base: errCorrupt}
	// ErrUnsupportedVersion: a pack written by a format version this
	// release cannot read. It is also ErrCorrupt, because the bytes cannot
	// be used, but callers may tell the user to upgrade instead.
	ErrUnsupportedVersion error = &noinit.Wrapped{Msg: "cas: corrupt data: unsupported pack format version", Base: errCorrupt}
	// ErrEmptyPack: Finish on a PackWriter with no objects; an empty pack
	// is never written (and refused on read as corrupt).
	ErrEmptyPack error = noinit.Error("cas: empty pack")
	// ErrInvalidPath: a path given to WriteTree that cannot be a tree path
	// (empty segment, ".", "..", NUL, or a file that is also a directory).
	ErrInvalidPath error = noinit.Error("cas: invalid tree path")
	// ErrInvalidObject: an object handed to a Sink or encoder that breaks
	// the canonical rules (wrong ID, bad structure). Unlike ErrCorrupt it
	// names a caller mistake, not damaged storage.
	ErrInvalidObject error = noinit.Error("cas: invalid object")
	// ErrStoreClosed: a call on a Store after Close.
	ErrStoreClosed error = noinit.Error("cas: store is closed")
)

// corruptf returns an error wrapping ErrCorrupt.
func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}
