//go:build unix

package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
)

// corruptPack flips one byte of one cached pack file or bundle under the
// private root priv, in place, as a failing disk would. It reports whether a pack was
// there to damage and now reads back different.
func corruptPack(priv string, rng *rand.Rand) (bool, error) {
	packs, err := filepath.Glob(filepath.Join(priv, "stores", "*", "chains", "*", "*.pack"))
	if err != nil {
		return false, err
	}
	// The packs one sync fetched share a bundle file (cas, docs/format.md §5).
	bundles, err := filepath.Glob(filepath.Join(priv, "stores", "*", "chains", "*", "*.bundle"))
	if err != nil {
		return false, err
	}
	packs = append(packs, bundles...)
	if len(packs) == 0 {
		return false, nil
	}
	slices.Sort(packs) // Glob's order is the file system's; the seed picks from a sorted list
	p := packs[rng.IntN(len(packs))]
	before, err := os.ReadFile(p)
	if err != nil || len(before) == 0 {
		return false, nil // removed or replaced meanwhile: nothing was damaged
	}
	at := rng.IntN(len(before))
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		return false, nil
	}
	_, err = f.WriteAt([]byte{before[at] ^ byte(1+rng.IntN(255))}, int64(at))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, nil
	}
	after, err := os.ReadFile(p)
	return err == nil && !bytes.Equal(before, after), nil
}
