package workdir

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
)

func scanDir(t *testing.T, dir string, cache *StatCache) *Listing {
	t.Helper()
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	res, err := Scan(r, cache, Rules{TempsOurs: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func writeAged(t *testing.T, p, content string, age time.Duration) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-age)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
}

// Unchanged files are not re-read; a changed file is, even when its size
// and mtime were restored; empty directories are not state.
func TestScanUsesStatCache(t *testing.T) {
	dir := t.TempDir()
	writeAged(t, filepath.Join(dir, "a.md"), "aaa\n", time.Hour)
	writeAged(t, filepath.Join(dir, "sub/b.md"), "bbb\n", time.Hour)
	if err := os.MkdirAll(filepath.Join(dir, "empty/deeper"), 0o755); err != nil {
		t.Fatal(err)
	}
	first := scanDir(t, dir, NewStatCache())
	if len(first.Content) != 2 || len(first.Files) != 2 || !first.Changed {
		t.Fatalf("cold scan read %d files, tree %v", len(first.Content), first.Files)
	}
	want, _ := cas.WriteFile(nil, []byte("aaa\n"))
	if first.Files["a.md"] != want {
		t.Fatal("file ID differs from cas.WriteFile")
	}
	for p, s := range first.Stats.All() {
		if !s.Trusted {
			t.Fatalf("%s written an hour ago is not trusted", p)
		}
	}

	second := scanDir(t, dir, first.Stats)
	if len(second.Content) != 0 || second.Changed {
		t.Fatalf("warm scan re-read %d files", len(second.Content))
	}
	equalMaps(t, "tree", second.Files, first.Files)

	// Same size, mtime restored: the change time still differs.
	fi, _ := os.Stat(filepath.Join(dir, "a.md"))
	if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte("AAA\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Join(dir, "a.md"), fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	third := scanDir(t, dir, second.Stats)
	if _, reread := third.Content["a.md"]; !reread || third.Files["a.md"] == first.Files["a.md"] {
		t.Fatal("an edit that kept size and mtime was not seen")
	}
	if _, reread := third.Content["sub/b.md"]; reread {
		t.Fatal("an unchanged file was re-read")
	}
}

// A file modified within the racy window of the scan that recorded it is
// not trusted: the next scan re-reads it.
func TestScanRacyTimestampGuard(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "hot.md")
	if err := os.WriteFile(p, []byte("v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	first := scanDir(t, dir, NewStatCache())
	if e, _ := first.Stats.Get("hot.md"); e.Trusted {
		t.Fatal("a file written just now is trusted")
	}
	second := scanDir(t, dir, first.Stats)
	if _, reread := second.Content["hot.md"]; !reread {
		t.Fatal("an untrusted entry was not re-read")
	}
}

// Leftover temporary files of an interrupted rewrite are not content.
func TestScanIgnoresRewriteTemps(t *testing.T) {
	dir := t.TempDir()
	writeAged(t, filepath.Join(dir, "a.md"), "a\n", time.Hour)
	tmp := "sub/" + TempPrefix + "0123456789abcdef.tmp"
	writeAged(t, filepath.Join(dir, tmp), "partial", time.Hour)
	res := scanDir(t, dir, NewStatCache())
	if len(res.Files) != 1 || len(res.Temps) != 1 || res.Temps[0] != tmp {
		t.Fatalf("files %v temps %v", res.Files, res.Temps)
	}
	if IsTempName(TempPrefix+"x.tmp") || IsTempName("notes.tmp") {
		t.Fatal("IsTempName too broad")
	}
}

func equalMaps[V comparable](t *testing.T, what string, got, want map[string]V) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got  %v\n want %v", what, got, want)
	}
}

// A scan lists the chunks of each chunked file it read, as cas.HashFile
// cuts them (what a commit puts into its pack without cutting again),
// and none for an inline file or a file it did not read.
func TestScanListsChunksOfFilesRead(t *testing.T) {
	dir := t.TempDir()
	big := bytes.Repeat([]byte("a line of a long note\n"), 2000)
	os.WriteFile(filepath.Join(dir, "big.md"), big, 0o644)
	os.WriteFile(filepath.Join(dir, "small.md"), []byte("small\n"), 0o644)
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cache := NewStatCache()
	res, err := Scan(r, cache, Rules{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	id, chunks, err := cas.HashFile(big)
	if err != nil {
		t.Fatal(err)
	}
	if res.Files["big.md"] != id || !slices.Equal(res.Chunks["big.md"], chunks) {
		t.Fatalf("big.md: %v with chunks %v, want %v with %v", res.Files["big.md"], res.Chunks["big.md"], id, chunks)
	}
	if c, ok := res.Chunks["small.md"]; ok {
		t.Fatalf("small.md (inline) has chunks %v", c)
	}
	for _, p := range []string{"big.md", "small.md"} {
		e, _ := cache.Get(p)
		e.Trusted = true // as if scanned long ago
		cache.Set(p, e)
	}
	again, err := Scan(r, cache, Rules{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Content) != 0 || len(again.Chunks) != 0 {
		t.Fatalf("a scan that read nothing lists chunks %v", again.Chunks)
	}
}
