package remote

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/slivingdoc/slivingdoc/internal/noinit"
)

// Store identity (docs/storage.md, "The store ID"). A URL names a place,
// not a store: a bucket emptied and filled again, or a prefix deleted and
// started afresh, is another notebook at the same URL, and everything a
// host keeps about a store (caches, the probe verdict, the highest
// generation seen, each directory's record) must not be carried over to
// it. So each store holds one small immutable
// object, StoreIDKey, naming it with a random ID. It is created once, by a
// conditional create (If-None-Match), by the first writer that finds none,
// and never changes; a store copied or restored from a backup keeps it.
// It lives beside `current` rather than in it so that `current`'s format
// does not change and binaries that predate it simply ignore it.

// StoreIDKey is the key of the store ID object.
const StoreIDKey = "store-id"

// storeIDHeader is the first line of the store ID object; the line after
// it is the ID. The version in it would change only with the object's
// format, which no reader but this one depends on.
const storeIDHeader = "slivingdoc store-id 1\n"

// storeIDLen is the length of an ID: 128 random bits in lower-case hex.
const storeIDLen = 32

// ErrCorruptStoreID: the store ID object is not one this binary wrote.
var ErrCorruptStoreID error = &noinit.Wrapped{Msg: "remote: corrupt store ID: remote: integrity violation", Base: errIntegrity}

// NewStoreID returns a fresh random store ID.
func NewStoreID() string {
	var b [storeIDLen / 2]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24)
	return hex.EncodeToString(b[:])
}

// IsStoreID reports whether s has the form of a store ID.
func IsStoreID(s string) bool {
	if len(s) != storeIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// EncodeStoreID returns the bytes of the store ID object for id.
func EncodeStoreID(id string) []byte {
	b := make([]byte, 0, len(storeIDHeader)+storeIDLen+1)
	b = append(b, storeIDHeader...)
	b = append(b, id...)
	return append(b, '\n')
}

// DecodeStoreID parses the store ID object strictly: the header, the ID,
// one newline, nothing else.
func DecodeStoreID(data []byte) (string, error) {
	if len(data) != len(storeIDHeader)+storeIDLen+1 || string(data[:len(storeIDHeader)]) != storeIDHeader || data[len(data)-1] != '\n' {
		return "", fmt.Errorf("%w: %d bytes, not a store ID object", ErrCorruptStoreID, len(data))
	}
	id := string(data[len(storeIDHeader) : len(data)-1])
	if !IsStoreID(id) {
		return "", fmt.Errorf("%w: malformed ID", ErrCorruptStoreID)
	}
	return id, nil
}

// ReadStoreID returns the store's ID, or "" when it has none yet (a new
// store, or one made by a binary that predates store IDs): readers treat
// such a store as not yet named, without failing. One GET.
func ReadStoreID(ctx context.Context, store Store) (string, error) {
	data, _, err := store.Get(ctx, StoreIDKey)
	if errors.Is(err, ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("remote: read store ID: %w", err)
	}
	return DecodeStoreID(data)
}

// EnsureStoreID returns the store's ID, creating it first when the store
// has none. Racing writers agree: exactly one conditional create wins and
// the others read its ID; a create whose outcome is unknown is settled by
// reading the object back.
func EnsureStoreID(ctx context.Context, store Store) (string, error) {
	id, err := ReadStoreID(ctx, store)
	if err != nil || id != "" {
		return id, err
	}
	fresh := NewStoreID()
	_, err = store.CreateIfAbsent(ctx, StoreIDKey, EncodeStoreID(fresh))
	switch {
	case err == nil:
		return fresh, nil
	case errors.Is(err, ErrPrecondition), errors.Is(err, ErrAmbiguous):
		// Another writer named the store first, or our create may or may
		// not have landed: what the store holds now is the answer.
		id, rerr := ReadStoreID(ctx, store)
		if rerr != nil {
			return "", rerr
		}
		if id == "" {
			return "", fmt.Errorf("remote: create store ID: %w", err)
		}
		return id, nil
	default:
		return "", fmt.Errorf("remote: create store ID: %w", err)
	}
}
