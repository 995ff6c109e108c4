package remote_test

import (
	"testing"

	"github.com/slivingdoc/slivingdoc/remote"
)

func TestUUIDv7(t *testing.T) {
	prev := ""
	seen := map[string]bool{}
	for range 10000 {
		u := remote.NewUUIDv7()
		if !remote.IsPublicationID(u) {
			t.Fatalf("%q is not a canonical UUIDv7", u)
		}
		if seen[u] {
			t.Fatalf("duplicate %s", u)
		}
		seen[u] = true
		if u <= prev {
			t.Fatalf("%s after %s: IDs from one process must increase", u, prev)
		}
		prev = u
	}
}

func TestIsPublicationIDRefuses(t *testing.T) {
	for _, s := range []string{
		"",
		"01936f2a-0000-4000-8000-000000000001",  // version 4
		"01936f2a-0000-7000-c000-000000000001",  // variant 110
		"01936F2A-0000-7000-8000-000000000001",  // uppercase
		"01936f2a00007000800000000000000001",    // no dashes
		"01936f2a-0000-7000-8000-00000000000g",  // not hex
		"01936f2a-0000-7000-8000-0000000000011", // too long
		"{01936f2a-0000-7000-8000-000000000001}",
	} {
		if remote.IsPublicationID(s) {
			t.Errorf("IsPublicationID(%q) = true", s)
		}
	}
}

func TestPackKeys(t *testing.T) {
	pub := remote.NewUUIDv7()
	for _, tc := range []struct {
		key        string
		checkpoint bool
		gen        uint64
	}{
		{remote.IncrementKey(7, pub), false, 7},
		{remote.CheckpointKey(1<<64-1, pub), true, 1<<64 - 1},
	} {
		cp, gen, p, err := remote.ParsePackKey(tc.key)
		if err != nil || cp != tc.checkpoint || gen != tc.gen || p != pub {
			t.Fatalf("ParsePackKey(%q) = %t %d %q %v", tc.key, cp, gen, p, err)
		}
		if err := remote.CheckKey(tc.key); err != nil {
			t.Fatalf("a pack key is not a valid store key: %v", err)
		}
	}
	// Zero-padding keeps a lexical listing in generation order.
	if !(remote.IncrementKey(9, pub) < remote.IncrementKey(10, pub)) {
		t.Fatal("increment keys do not sort by generation")
	}
	for _, bad := range []string{"current", "packs/increments/7-" + pub + ".pack", "packs/increments/00000000000000000007-x.pack", "probe/" + pub, "packs/other/00000000000000000007-" + pub + ".pack"} {
		if _, _, _, err := remote.ParsePackKey(bad); err == nil {
			t.Errorf("ParsePackKey(%q) accepted", bad)
		}
	}
}
