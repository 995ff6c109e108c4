package server

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"

	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/objcache"
)

// The object caches under P/stores/<key>/chains are package objcache's
// (e.caches); this is the engine's side: the mapping of their failures to
// the catalogue, and what they need to know of P's baselines.

// sync makes the cache of state's chain hold the closure of state's head
// (objcache.Caches.Sync), its failures mapped.
func (e *Engine) sync(ctx context.Context, state remote.State) (*objcache.Chain, error) {
	c, err := e.caches.Sync(ctx, state)
	if err == nil {
		return c, nil
	}
	var fe *objcache.FetchError
	if errors.As(err, &fe) {
		return nil, e.packFailure(err)
	}
	return nil, mapErr(err)
}

// packFailure reports a failure of the caches to fetch or keep a pack as
// the pack's, after forgetting the probe verdict if the store is in
// trouble; any other failure is returned as it is.
func (e *Engine) packFailure(err error) error {
	var fe *objcache.FetchError
	if !errors.As(err, &fe) {
		return err
	}
	e.storeTrouble(fe.Err)
	return packErr(fe.Err)
}

// oldestBaseline returns the lowest generation of the baselines recorded
// in P (only their headers are read); false when there is none.
func (e *Engine) oldestBaseline() (uint64, bool) {
	dirs, err := os.ReadDir(filepath.Join(e.private, "dirs"))
	if err != nil {
		return 0, false
	}
	var oldest uint64
	found := false
	head := make([]byte, len(baselineMagic)+8)
	for _, d := range dirs {
		f, err := os.Open(filepath.Join(e.private, "dirs", d.Name(), "baseline"))
		if err != nil {
			continue // never pulled
		}
		_, err = io.ReadFull(f, head)
		f.Close()
		g := uint64(0) // unreadable: pin everything, to be safe
		if err == nil && string(head[:len(baselineMagic)]) == baselineMagic {
			g = binary.BigEndian.Uint64(head[len(baselineMagic):])
		}
		if !found || g < oldest {
			oldest, found = g, true
		}
	}
	return oldest, found
}
