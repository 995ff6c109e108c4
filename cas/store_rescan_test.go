package cas_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
)

// A miss rescans the directory only when its modification time says it may
// have changed: a store whose directory is old and unchanged answers a
// miss with one stat, and a pack another process adds (which moves the
// modification time) is still found.
func TestStoreRescansOnlyWhenDirectoryChanged(t *testing.T) {
	dir := t.TempDir()
	reader, writer := openStore(t, dir), openStore(t, dir)
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(dir, old, old); err != nil {
		t.Fatal(err)
	}
	if err := reader.Refresh(); err != nil {
		t.Fatal(err)
	}

	// A pack slipped in without moving the directory's time is not seen
	// by a miss (proof the miss did not read the directory)...
	data, id := packOf(t, []byte("hidden"))
	if err := os.WriteFile(filepath.Join(dir, "hidden.pack"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(dir, old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := reader.Get(id); !errors.Is(err, cas.ErrNotFound) {
		t.Fatalf("Get rescanned an unchanged directory: error = %v", err)
	}
	// ...but an explicit Refresh finds it,
	if err := reader.Refresh(); err != nil {
		t.Fatal(err)
	}
	if _, err := reader.Get(id); err != nil {
		t.Fatalf("after Refresh: %v", err)
	}

	// and a pack added the normal way moves the time and is found by a miss.
	data2, id2 := packOf(t, []byte("added by another process"))
	if err := writer.AddPack("added.pack", data2); err != nil {
		t.Fatal(err)
	}
	if _, err := reader.Get(id2); err != nil {
		t.Fatalf("pack added by another process not found: %v", err)
	}
}
