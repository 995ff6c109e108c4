package pstate

import "testing"

// A sealed record reads back; a torn one (any byte of the old and the new
// mixed, or a crash's zeros) reads as none; the older unsealed form reads.
func TestSealedRecords(t *testing.T) {
	rec := Seal("00000000000000001299", "ab")
	if f, ok := Unseal(rec, 2); !ok || f[0] != "00000000000000001299" || f[1] != "ab" {
		t.Fatalf("round trip of %q: %q, %v", rec, f, ok)
	}
	newer := Seal("00000000000000001300", "ab")
	for i := range rec {
		torn := append(append([]byte(nil), newer[:i]...), rec[i:]...)
		if string(torn) == string(rec) || string(torn) == string(newer) {
			continue
		}
		if f, ok := Unseal(torn, 2); ok {
			t.Errorf("torn record %q read as %q", torn, f)
		}
	}
	if _, ok := Unseal(make([]byte, len(rec)), 2); ok {
		t.Error("a record of zeros read")
	}
	if f, ok := Unseal([]byte("1299 ab\n"), 2); !ok || f[0] != "1299" {
		t.Errorf("older form: %q, %v", f, ok)
	}
	if _, ok := Unseal([]byte("1299\n"), 2); ok {
		t.Error("a record with a field missing read")
	}
}
