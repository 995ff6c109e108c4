package cas_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
)

// smallBundle returns the bytes and file name of a bundle of two small
// packs, and the packs.
func smallBundle(t *testing.T) ([]byte, string, []cas.NamedPack) {
	t.Helper()
	a, _ := packOf(t, []byte("first\n"))
	b, _ := packOf(t, []byte("second\n"))
	packs := []cas.NamedPack{{Name: "1-a.pack", Data: a}, {Name: "2-b.pack", Data: b}}
	_, file := bundleOf(t, packs)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return data, filepath.Base(file), packs
}

// damageFound puts data in a store as the file name and reports the first
// corruption a store finds there the way healing looks for it: a file it
// cannot load, or a pack that fails VerifyPack.
func damageFound(t *testing.T, dir, name string, data []byte, packs []cas.NamedPack) error {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := cas.OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, broken := s.Packs()
	if err := broken[name]; err != nil {
		return err
	}
	for _, p := range packs {
		if err := s.VerifyPack(p.Name); err != nil {
			return err
		}
	}
	return nil
}

// Any single flipped bit anywhere in a bundle is found: in the header by
// its checksum and structure, in a pack by the pack's own checks.
func TestBundleEveryFlippedBitIsDetected(t *testing.T) {
	data, name, packs := smallBundle(t)
	dir := t.TempDir()
	if err := damageFound(t, dir, name, data, packs); err != nil {
		t.Fatalf("intact bundle: %v", err)
	}
	t.Logf("bundle of %d bytes, %d bit flips", len(data), 8*len(data))
	for i := range data {
		for bit := range 8 {
			bad := bytes.Clone(data)
			bad[i] ^= 1 << bit
			if err := damageFound(t, dir, name, bad, packs); !errors.Is(err, cas.ErrCorrupt) {
				t.Fatalf("flip of bit %d at byte %d: error = %v, want ErrCorrupt", bit, i, err)
			}
		}
	}
}

// Every proper prefix of a bundle, as a crash in a file system without
// the store's rename discipline would leave, is refused as truncated; so
// is a bundle with a byte added.
func TestBundleTruncationIsReported(t *testing.T) {
	data, name, packs := smallBundle(t)
	dir := t.TempDir()
	for n := range len(data) {
		if err := damageFound(t, dir, name, data[:n], packs); !errors.Is(err, cas.ErrTruncated) {
			t.Fatalf("bundle cut to %d of %d bytes: error = %v, want ErrTruncated", n, len(data), err)
		}
	}
	err := damageFound(t, dir, name, append(bytes.Clone(data), 0), packs)
	if !errors.Is(err, cas.ErrCorrupt) || errors.Is(err, cas.ErrTruncated) {
		t.Fatalf("bundle with a trailing byte: error = %v, want ErrCorrupt, not truncated", err)
	}
}

// A partial bundle left by a writer that died before its rename is a
// temporary file: never read, and swept once stale.
func TestBundleTempFileIsIgnored(t *testing.T) {
	data, name, packs := smallBundle(t)
	dir := t.TempDir()
	tmp := filepath.Join(dir, "."+name+".0123456789abcdef.tmp")
	if err := os.WriteFile(tmp, data[:len(data)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, dir)
	names, broken := s.Packs()
	if len(names) != 0 || len(broken) != 0 || s.HasPack(packs[0].Name) {
		t.Fatalf("a temporary bundle was read: packs %v, broken %v", names, broken)
	}
}
