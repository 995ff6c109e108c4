package server

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
)

func scanDir(t *testing.T, dir string, cache map[string]statEntry) *scanResult {
	t.Helper()
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	res, err := scan(r, cache)
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
	first := scanDir(t, dir, map[string]statEntry{})
	if len(first.content) != 2 || len(first.files) != 2 || !first.changed {
		t.Fatalf("cold scan read %d files, tree %v", len(first.content), first.files)
	}
	want, _ := cas.WriteFile(nil, []byte("aaa\n"))
	if first.files["a.md"] != want {
		t.Fatal("file ID differs from cas.WriteFile")
	}
	for p, s := range first.stats {
		if !s.Trusted {
			t.Fatalf("%s written an hour ago is not trusted", p)
		}
	}

	second := scanDir(t, dir, first.stats)
	if len(second.content) != 0 || second.changed {
		t.Fatalf("warm scan re-read %d files", len(second.content))
	}
	equalMaps(t, "tree", second.files, first.files)

	// Same size, mtime restored: the change time still differs.
	fi, _ := os.Stat(filepath.Join(dir, "a.md"))
	if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte("AAA\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Join(dir, "a.md"), fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	third := scanDir(t, dir, second.stats)
	if _, reread := third.content["a.md"]; !reread || third.files["a.md"] == first.files["a.md"] {
		t.Fatal("an edit that kept size and mtime was not seen")
	}
	if _, reread := third.content["sub/b.md"]; reread {
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
	first := scanDir(t, dir, map[string]statEntry{})
	if first.stats["hot.md"].Trusted {
		t.Fatal("a file written just now is trusted")
	}
	second := scanDir(t, dir, first.stats)
	if _, reread := second.content["hot.md"]; !reread {
		t.Fatal("an untrusted entry was not re-read")
	}
}

// Leftover temporary files of an interrupted rewrite are not content.
func TestScanIgnoresRewriteTemps(t *testing.T) {
	dir := t.TempDir()
	writeAged(t, filepath.Join(dir, "a.md"), "a\n", time.Hour)
	tmp := "sub/" + tempPrefix + "0123456789abcdef.tmp"
	writeAged(t, filepath.Join(dir, tmp), "partial", time.Hour)
	res := scanDir(t, dir, map[string]statEntry{})
	if len(res.files) != 1 || len(res.temps) != 1 || res.temps[0] != tmp {
		t.Fatalf("files %v temps %v", res.files, res.temps)
	}
	if isTempName(tempPrefix+"x.tmp") || isTempName("notes.tmp") {
		t.Fatal("isTempName too broad")
	}
}
