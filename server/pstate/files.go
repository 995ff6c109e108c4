package pstate

import (
	"encoding/hex"
	"os"
	"path/filepath"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/osfile"
)

// HashKey names a P directory or file after s without revealing s: the
// first 16 bytes of its BLAKE3, in hex.
func HashKey(s string) string {
	sum := cas.Sum([]byte(s))
	return hex.EncodeToString(sum[:16])
}

// WriteAtomic replaces name with data so that a reader (or a crash) sees
// either the old or the new content, never a mix, and makes it durable.
func WriteAtomic(name string, data []byte) error { return WriteReplace(name, data, true) }

// WriteReplace is WriteAtomic, optionally without the fsyncs (for caches,
// whose loss costs only time and whose tearing a checksum detects).
func WriteReplace(name string, data []byte, durable bool) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		return err
	}
	return osfile.WriteFile(name, 0o600, durable, data)
}
