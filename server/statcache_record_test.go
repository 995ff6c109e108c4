package server

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A scan that had to re-read only a few files of a large notebook does
// not rewrite the stat cache (re-reading them next time is cheaper than
// writing every entry); one that re-read many does. Either way the next
// scan sees every edit.
func TestStatCacheRecordedWhenItSparesReads(t *testing.T) {
	dir := t.TempDir()
	const n = 300
	for i := range n {
		writeAged(t, filepath.Join(dir, fmt.Sprintf("n%03d.md", i)), fmt.Sprintf("note %d\n", i), time.Hour)
	}
	recorded := scanDir(t, dir, map[string]statEntry{})
	if !recorded.worthRecording() {
		t.Fatal("a cold scan is not worth recording")
	}
	saved := maps.Clone(recorded.stats)

	writeAged(t, filepath.Join(dir, "n007.md"), "edited\n", time.Minute)
	few := scanDir(t, dir, maps.Clone(saved))
	if _, reread := few.content["n007.md"]; !reread || len(few.content) != 1 {
		t.Fatalf("re-read %d files, want only the edited one", len(few.content))
	}
	if few.worthRecording() {
		t.Fatal("one re-read file of 300 rewrites the whole cache")
	}
	// Not recorded: the next scan starts from the old cache and still
	// reads the edit.
	again := scanDir(t, dir, maps.Clone(saved))
	if again.files["n007.md"] != few.files["n007.md"] || again.files["n007.md"] == recorded.files["n007.md"] {
		t.Fatal("the edit was lost with the unrecorded cache")
	}

	for i := range 10 {
		writeAged(t, filepath.Join(dir, fmt.Sprintf("n%03d.md", 100+i)), "edited\n", time.Minute)
	}
	many := scanDir(t, dir, maps.Clone(saved))
	if !many.worthRecording() {
		t.Fatal("eleven re-read files of 300 are not worth recording")
	}

	if err := os.Remove(filepath.Join(dir, "n299.md")); err != nil {
		t.Fatal(err)
	}
	gone := scanDir(t, dir, maps.Clone(many.stats))
	if len(gone.content) != 0 || !gone.worthRecording() {
		t.Fatal("a vanished file's entry is not forgotten on disk")
	}
}
