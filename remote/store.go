package remote

import (
	"context"
	"fmt"
	"strings"
)

// ObjectInfo describes one listed object.
type ObjectInfo struct {
	Key  string
	Size int64
	ETag string
}

// Store is the object-store boundary. Keys are relative to the notebook's
// prefix, "/"-separated. Guarantees every backend must give (proved by the
// contract suite and, in the field, by Probe):
//   - read-after-write: a Get after a successful write returns that write;
//   - CreateIfAbsent succeeds for exactly one of any number of racing callers;
//   - ReplaceIfMatch succeeds only when the stored ETag equals etag, and for
//     exactly one of racing callers holding the same ETag;
//   - a failed write leaves no partial object.
//
// Error mapping: a missing object is ErrNotFound, a failed condition is
// ErrPrecondition (for ReplaceIfMatch on a missing key too), and a write
// whose outcome is unknown is ErrAmbiguous.
type Store interface {
	Get(ctx context.Context, key string) (data []byte, etag string, err error)
	Head(ctx context.Context, key string) (ObjectInfo, error)
	CreateIfAbsent(ctx context.Context, key string, data []byte) (etag string, err error)
	ReplaceIfMatch(ctx context.Context, key string, data []byte, etag string) (newETag string, err error)
	Put(ctx context.Context, key string, data []byte) error // immutable objects (packs)
	Delete(ctx context.Context, key string) error           // deleting a missing key is not an error
	List(ctx context.Context, prefix string) ([]ObjectInfo, error)
	// Identity names the store and prefix (no credentials), stable across
	// processes: private state is keyed by it.
	Identity() string
}

// maxKeyLen bounds keys well below every backend's limit (S3: 1,024 bytes
// including the prefix).
const maxKeyLen = 512

// CheckKey reports whether key is one a Store may address: non-empty,
// relative, "/"-separated segments that are neither empty nor "." or "..",
// no backslash or control character, and no segment starting with "." (the
// file backend keeps its own files under dot names). All keys the notebook
// uses satisfy it; backends call it so a bad key fails the same way
// everywhere.
func CheckKey(key string) error {
	if key == "" || len(key) > maxKeyLen {
		return fmt.Errorf("%w: length %d", ErrInvalidKey, len(key))
	}
	for _, seg := range strings.Split(key, "/") {
		if seg == "" || seg[0] == '.' {
			return fmt.Errorf("%w: %q has an empty or dot segment", ErrInvalidKey, key)
		}
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x20 || c == 0x7f || c == '\\' {
			return fmt.Errorf("%w: %q has a control character or backslash", ErrInvalidKey, key)
		}
	}
	return nil
}

// CheckPrefix validates a List prefix: empty (everything) or a key prefix
// whose complete segments are valid. Backends call it in List.
func CheckPrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	trimmed := strings.TrimSuffix(prefix, "/")
	if trimmed == "" {
		return fmt.Errorf("%w: list prefix %q", ErrInvalidKey, prefix)
	}
	return CheckKey(trimmed)
}
