package remote

import (
	"context"
	"strings"
)

// ListerAfter is a Store that can list the keys of a prefix that sort
// after a given key, leaving out the rest at the source. A listing of
// `proposals/` needs only the versions inside the window of the newest
// generations, while the accepted proposals, whose packs hold their
// generations' objects, stay in the store for good: on S3, whose LIST
// pages hold 1,000 keys, a full listing would cost one request more per
// thousand generations of history, on every commit. S3's StartAfter does
// it in one request; the other backends filter what they read.
type ListerAfter interface {
	// ListAfter is List(prefix) without the keys that sort at or before
	// after (byte order).
	ListAfter(ctx context.Context, prefix, after string) ([]ObjectInfo, error)
}

// ListAfter lists the keys of prefix that sort after after: through the
// store's own ListAfter when it has one, else by filtering List. Either
// way the result is the same, sorted by key.
func ListAfter(ctx context.Context, s Store, prefix, after string) ([]ObjectInfo, error) {
	if l, ok := s.(ListerAfter); ok {
		return l.ListAfter(ctx, prefix, after)
	}
	objs, err := s.List(ctx, prefix)
	if err != nil {
		return nil, err
	}
	return After(objs, after), nil
}

// After returns the objects of a sorted listing whose keys sort after
// after (a backend's filter).
func After(objs []ObjectInfo, after string) []ObjectInfo {
	i := 0
	for i < len(objs) && strings.Compare(objs[i].Key, after) <= 0 {
		i++
	}
	return objs[i:]
}
