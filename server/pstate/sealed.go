package pstate

import (
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"

	"github.com/slivingdoc/slivingdoc/internal/osfile"
)

// Sealed records. The small records P rewrites on most commits (a chain
// cache's reach, the highest generation seen, the store's timing estimates
// and a directory's streak) are overwritten in place (osfile.Overwrite) rather than
// replaced through a new file: five fewer inodes created and freed per
// commit, each about 150 µs of CPU on an ext4 disk that frees inodes
// often, against a few µs for a write in place. So they carry
// their own check: one line of fixed-width fields, then the CRC-32C of the
// fields (as written, joined by spaces) in 8 hex digits. A read that meets
// a write half done, or what a crash left, fails the check and reads as no
// record: what a missing cache record costs (a longer catch-up, a weaker
// safeguard), never a wrong value. A record of the older form (the fields
// alone, written by replacement, so never torn) is still read.

// castagnoli is the CRC-32C table, asked for at use rather than made at
// package initialisation (hash/crc32 builds it once, on the first ask).
func castagnoli() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) }

// Seal returns the line holding fields (each of fixed width per
// record kind) and their check.
func Seal(fields ...string) []byte {
	payload := strings.Join(fields, " ")
	return fmt.Appendf(nil, "%s %08x\n", payload, crc32.Checksum([]byte(payload), castagnoli()))
}

// Unseal returns the n fields of a record: a sealed one whose check
// holds, or one of the older form (exactly n fields); false otherwise.
func Unseal(data []byte, n int) ([]string, bool) {
	f := strings.Fields(string(data))
	switch len(f) {
	case n:
		return f, true
	case n + 1:
		payload := strings.Join(f[:n], " ")
		if fmt.Sprintf("%08x", crc32.Checksum([]byte(payload), castagnoli())) == f[n] {
			return f[:n], true
		}
	}
	return nil, false
}

// Overwrite writes record to name (its directory made if needed),
// in place once it exists with the same length. Its readers must detect a
// mix of two versions: a sealed record, or the stat cache (its BLAKE3).
func Overwrite(name string, record []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		return err
	}
	return osfile.Overwrite(name, 0o600, record)
}
