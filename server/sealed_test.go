package server

import (
	"os"
	"path/filepath"
	"testing"
)

// A sealed record reads back; a torn one (any byte of the old and the new
// mixed, or a crash's zeros) reads as none; the older unsealed form reads.
func TestSealedRecords(t *testing.T) {
	rec := sealRecord("00000000000000001299", "ab")
	if f, ok := unsealRecord(rec, 2); !ok || f[0] != "00000000000000001299" || f[1] != "ab" {
		t.Fatalf("round trip of %q: %q, %v", rec, f, ok)
	}
	newer := sealRecord("00000000000000001300", "ab")
	for i := range rec {
		torn := append(append([]byte(nil), newer[:i]...), rec[i:]...)
		if string(torn) == string(rec) || string(torn) == string(newer) {
			continue
		}
		if f, ok := unsealRecord(torn, 2); ok {
			t.Errorf("torn record %q read as %q", torn, f)
		}
	}
	if _, ok := unsealRecord(make([]byte, len(rec)), 2); ok {
		t.Error("a record of zeros read")
	}
	if f, ok := unsealRecord([]byte("1299 ab\n"), 2); !ok || f[0] != "1299" {
		t.Errorf("older form: %q, %v", f, ok)
	}
	if _, ok := unsealRecord([]byte("1299\n"), 2); ok {
		t.Error("a record with a field missing read")
	}
}

// The highest generation seen is kept in one file rewritten in place, and a
// torn record never makes a store look regressed: it reads as no memory.
func TestHighestGenerationRecord(t *testing.T) {
	dir := t.TempDir()
	g := newGenerationMemory(dir, nil)
	for _, v := range []uint64{9, 10, 1300} {
		g.highest = v
		g.record()
		if got := g.readFile(); got != v {
			t.Fatalf("recorded %d, read %d", v, got)
		}
	}
	path := filepath.Join(dir, "highest")
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	g.highest = 1301
	g.record()
	if after, err := os.Stat(path); err != nil || !os.SameFile(before, after) {
		t.Fatalf("the record was replaced, not rewritten in place (%v)", err)
	}
	// Half of 1399 written over 1301: the digits alone would say 1391.
	data, _ := os.ReadFile(path)
	torn := append([]byte(nil), data...)
	copy(torn[:19], sealRecord("00000000000000001399")[:19])
	if err := os.WriteFile(path, torn, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := g.readFile(); got != 0 {
		t.Fatalf("torn record %q read as %d, want none", torn, got)
	}
	// A record an older binary wrote (by replacement) is read.
	if err := os.WriteFile(path, []byte("77\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := g.readFile(); got != 77 {
		t.Fatalf("older record read as %d, want 77", got)
	}
}
