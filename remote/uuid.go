package remote

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"sync"
	"time"
)

// Publication IDs and probe keys are UUIDv7 (RFC 9562 §5.7): 48 bits of Unix
// milliseconds, then randomness, so IDs sort by creation time and never
// collide between writers. Within one process a millisecond can hold many
// IDs; the 12-bit rand_a field is then used as a counter (RFC 9562 §6.2,
// method 1) so IDs made here stay strictly increasing.

var uuidState struct {
	sync.Mutex
	lastMS  uint64
	counter uint16 // next rand_a value within lastMS
}

// NewUUIDv7 returns a fresh UUIDv7 in canonical lowercase form.
func NewUUIDv7() string { return newUUIDv7(time.Now()) }

func newUUIDv7(now time.Time) string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("remote: crypto/rand failed: " + err.Error()) // crypto/rand does not fail on supported platforms
	}
	ms := uint64(now.UnixMilli())
	uuidState.Lock()
	switch {
	case ms > uuidState.lastMS:
		uuidState.lastMS = ms
		uuidState.counter = binary.BigEndian.Uint16(b[6:8]) & 0x07ff // leave room to count up
	case uuidState.counter < 0x0fff:
		uuidState.counter++
		ms = uuidState.lastMS // the clock stepped back or the millisecond is not over: stay monotonic
	default:
		uuidState.lastMS++ // counter exhausted: borrow the next millisecond
		uuidState.counter = 0
		ms = uuidState.lastMS
	}
	seq := uuidState.counter
	uuidState.Unlock()

	b[0], b[1], b[2], b[3], b[4], b[5] = byte(ms>>40), byte(ms>>32), byte(ms>>24), byte(ms>>16), byte(ms>>8), byte(ms)
	b[6] = 0x70 | byte(seq>>8) // version 7
	b[7] = byte(seq)
	b[8] = 0x80 | b[8]&0x3f // variant 10
	return formatUUID(b)
}

func formatUUID(b [16]byte) string {
	var s [36]byte
	putUUID(s[:], b)
	return string(s[:])
}

// putUUID writes the canonical form of b into s[:36].
func putUUID(s []byte, b [16]byte) {
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:36], b[10:16])
}

// IsPublicationID reports whether s is a canonical lowercase UUIDv7 (version
// 7, RFC 9562 variant), the only form publication IDs take.
func IsPublicationID(s string) bool {
	if len(s) != len(publicationIDShape) {
		return false
	}
	// One table look-up per byte against the shape: `current` holds
	// hundreds of IDs, each checked as it is read and as it is validated.
	for i := range len(publicationIDShape) {
		if idByteClass[s[i]] != publicationIDShape[i] {
			return false
		}
	}
	return s[14] == '7' && (s[19]-'8' < 2 || s[19]-'a' < 2) // (unsigned: below wraps)
}

// publicationIDShape is the class of each byte of a canonical UUID
// (idHex or idDash), and idByteClass the class of every byte value (0:
// neither, as for upper-case hex).
var publicationIDShape, idByteClass = func() (shape [36]uint8, class [256]uint8) {
	for c := '0'; c <= '9'; c++ {
		class[c] = idHex
	}
	for c := 'a'; c <= 'f'; c++ {
		class[c] = idHex
	}
	class['-'] = idDash
	for i := range shape {
		shape[i] = idHex
	}
	shape[8], shape[13], shape[18], shape[23] = idDash, idDash, idDash, idDash
	return shape, class
}()

const (
	idHex  = 1
	idDash = 2
)
