package cas

import (
	"encoding/hex"
	"fmt"

	"github.com/zeebo/blake3"
)

// ID names an object: the BLAKE3-256 digest of its canonical encoding.
type ID [32]byte

// Sum returns the BLAKE3-256 digest of data. It is also the checksum used
// for whole packs in manifests.
func Sum(data []byte) ID {
	return ID(blake3.Sum256(data))
}

// IsZero reports whether id is the zero ID, which never names an object and
// stands for "none" (for example a root commit's parent).
func (id ID) IsZero() bool { return id == ID{} }

// String returns the 64 lowercase hex characters of id.
func (id ID) String() string { return hex.EncodeToString(id[:]) }

// ParseID parses 64 lowercase hex characters.
func ParseID(s string) (ID, error) {
	var id ID
	if len(s) != 2*len(id) {
		return id, fmt.Errorf("cas: object ID must be %d hex characters, got %d", 2*len(id), len(s))
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return id, fmt.Errorf("cas: object ID has a character that is not lowercase hex at offset %d", i)
		}
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil {
		return id, fmt.Errorf("cas: %w", err)
	}
	return id, nil
}
