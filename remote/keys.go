package remote

import (
	"fmt"
	"strconv"
	"strings"
)

// Key layout under one notebook's prefix (docs/storage.md). Generations in
// pack keys are zero-padded to 20 digits (the width of the largest uint64)
// so that a lexical listing is in generation order.
const (
	CurrentKey        = "current"
	IncrementsPrefix  = "packs/increments/"
	CheckpointsPrefix = "packs/checkpoints/"
	ProbePrefix       = "probe/"
	packSuffix        = ".pack"
)

// IncrementKey is the key of the pack published at generation by the
// publication with ID publication.
func IncrementKey(generation uint64, publication string) string {
	return packKey(IncrementsPrefix, generation, publication)
}

// CheckpointKey is the key of the checkpoint pack covering generations up to
// and including through, written by publication.
func CheckpointKey(through uint64, publication string) string {
	return packKey(CheckpointsPrefix, through, publication)
}

// packKey formats <prefix><generation, 20 digits>-<publication>.pack without
// fmt: manifest validation derives one key per increment.
func packKey(prefix string, generation uint64, publication string) string {
	b := make([]byte, 0, len(prefix)+20+1+len(publication)+len(packSuffix))
	b = append(b, prefix...)
	var digits [20]byte
	for i := len(digits) - 1; i >= 0; i-- {
		digits[i] = byte('0' + generation%10)
		generation /= 10
	}
	b = append(b, digits[:]...)
	b = append(b, '-')
	b = append(b, publication...)
	b = append(b, packSuffix...)
	return string(b)
}

// ProbeKey is the disposable key the startup probe uses.
func ProbeKey(id string) string { return ProbePrefix + id }

// ParsePackKey splits a pack key into its generation (an increment's
// generation or a checkpoint's through-generation) and publication ID. It
// accepts only keys IncrementKey or CheckpointKey produce; cleanup uses it
// to decide what lies at or below a cutoff.
func ParsePackKey(key string) (checkpoint bool, generation uint64, publication string, err error) {
	rest, ok := strings.CutPrefix(key, IncrementsPrefix)
	if !ok {
		if rest, ok = strings.CutPrefix(key, CheckpointsPrefix); !ok {
			return false, 0, "", fmt.Errorf("%w: %q is not a pack key", ErrInvalidKey, key)
		}
		checkpoint = true
	}
	rest, ok = strings.CutSuffix(rest, packSuffix)
	digits, publication, ok2 := strings.Cut(rest, "-")
	if !ok || !ok2 || len(digits) != 20 {
		return false, 0, "", fmt.Errorf("%w: %q is not a pack key", ErrInvalidKey, key)
	}
	generation, err = strconv.ParseUint(digits, 10, 64)
	if err != nil || !IsPublicationID(publication) {
		return false, 0, "", fmt.Errorf("%w: %q is not a pack key", ErrInvalidKey, key)
	}
	return checkpoint, generation, publication, nil
}

// isPackKey reports whether key == packKey(prefix, generation, publication)
// without building the string (validation runs it once per increment).
func isPackKey(key, prefix string, generation uint64, publication string) bool {
	if len(key) != len(prefix)+20+1+len(publication)+len(packSuffix) ||
		key[:len(prefix)] != prefix || key[len(key)-len(packSuffix):] != packSuffix {
		return false
	}
	digits := key[len(prefix) : len(prefix)+20]
	for i := len(digits) - 1; i >= 0; i-- {
		if digits[i] != byte('0'+generation%10) {
			return false
		}
		generation /= 10
	}
	rest := key[len(prefix)+20:]
	return rest[0] == '-' && rest[1:1+len(publication)] == publication
}
