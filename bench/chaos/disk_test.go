//go:build unix

package main

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Filling the small disk makes a real ENOSPC for anyone writing there;
// freeing it makes room again.
func TestSmallDiskFillsAndFrees(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root; the campaign leaves disk-full out here and says so")
	}
	d, err := mountSmallDisk(filepath.Join(t.TempDir(), "disk"), 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.unmount(); err != nil {
			t.Error(err)
		}
	})
	if err := d.fill(); err != nil {
		t.Fatal(err)
	}
	err = os.WriteFile(filepath.Join(d.dir, "note"), make([]byte, 8192), 0o600)
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write on the full disk: %v, want ENOSPC", err)
	}
	if err := d.free(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d.dir, "note"), make([]byte, 8192), 0o600); err != nil {
		t.Fatalf("write after freeing: %v", err)
	}
	if err := d.free(); err != nil {
		t.Fatalf("freeing twice: %v", err)
	}
}

// corruptPack changes exactly one byte of one cached pack, and reports
// false when there is no pack to damage.
func TestCorruptPack(t *testing.T) {
	priv := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 1))
	if fired, err := corruptPack(priv, rng); fired || err != nil {
		t.Fatalf("no packs: fired %t, err %v", fired, err)
	}
	chain := filepath.Join(priv, "stores", "s1", "chains", "c1")
	if err := os.MkdirAll(chain, 0o700); err != nil {
		t.Fatal(err)
	}
	orig := []byte("0123456789abcdef0123456789abcdef")
	p := filepath.Join(chain, "x.pack")
	if err := os.WriteFile(p, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	fired, err := corruptPack(priv, rng)
	if !fired || err != nil {
		t.Fatalf("fired %t, err %v; want a damaged pack", fired, err)
	}
	got, _ := os.ReadFile(p)
	diff := 0
	for i := range orig {
		if got[i] != orig[i] {
			diff++
		}
	}
	if len(got) != len(orig) || diff != 1 {
		t.Fatalf("%d bytes differ (size %d), want exactly one", diff, len(got))
	}
}
