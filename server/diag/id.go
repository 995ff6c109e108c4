package diag

import (
	"crypto/rand"
	"encoding/hex"
)

// NewID returns a fresh diagnostic ID: 16 lowercase hexadecimal characters
// correlating a result or report with the log records of its call.
func NewID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}
