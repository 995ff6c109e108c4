package remote

import "context"

// Stager is a Store that can write the bytes of a conditional write ahead
// of the request, so that the publication's slowest local steps overlap:
// the file store writes and fsyncs `current`'s temporary file while the
// pack is uploaded, leaving the conditional rename (and the fsync of the
// directory) for after it. Nothing is visible until the staged write is
// made; the guarantees of Store's conditional writes are unchanged.
type Stager interface {
	Stage(data []byte) StagedWrite
}

// StagedWrite is data a Stager is writing ahead. Exactly one of its
// writes may be made; Discard releases it otherwise (and is harmless
// after a write).
type StagedWrite interface {
	CreateIfAbsent(ctx context.Context, key string) (etag string, err error)
	ReplaceIfMatch(ctx context.Context, key, etag string) (newETag string, err error)
	Discard()
}

// stageAhead starts staging data when store can (nil otherwise).
func stageAhead(store Store, data []byte) StagedWrite {
	if s, ok := store.(Stager); ok {
		return s.Stage(data)
	}
	return nil
}

// discardStaged releases staged (nil: nothing).
func discardStaged(staged StagedWrite) {
	if staged != nil {
		staged.Discard()
	}
}

// writeCurrent is the conditional write of `current` (created when etag
// is empty, else replaced if it matches), through staged when not nil.
func writeCurrent(ctx context.Context, store Store, staged StagedWrite, data []byte, etag string) (string, error) {
	switch {
	case staged != nil && etag == "":
		return staged.CreateIfAbsent(ctx, CurrentKey)
	case staged != nil:
		return staged.ReplaceIfMatch(ctx, CurrentKey, etag)
	case etag == "":
		return store.CreateIfAbsent(ctx, CurrentKey, data)
	default:
		return store.ReplaceIfMatch(ctx, CurrentKey, data, etag)
	}
}
