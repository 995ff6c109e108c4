package seaweed

import (
	"os"
	"path/filepath"
	"testing"
)

// A build killed outright leaves its copy of the module and a half-written
// binary; the next build (under the lock) removes them and keeps the
// finished binary of an earlier build.
func TestRemoveLeftoversOfAKilledBuild(t *testing.T) {
	dir := t.TempDir()
	work := filepath.Join(dir, workDirName, "seaweedfs", "weed")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{
		filepath.Join(work, "weed.go"),
		filepath.Join(dir, ".weed-4242.tmp"),
		filepath.Join(dir, ".weed-77.tmp"),
		filepath.Join(dir, "weed"),
		filepath.Join(dir, "build.log"),
	} {
		if err := os.WriteFile(name, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := removeLeftovers(dir); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if len(left) != 2 || left[0] != "build.log" || left[1] != "weed" {
		t.Fatalf("after removeLeftovers the cache dir holds %v, want [build.log weed]", left)
	}
	// Nothing to remove is no error.
	if err := removeLeftovers(dir); err != nil {
		t.Fatal(err)
	}
}
