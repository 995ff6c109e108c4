package rules

import (
	"os"
	"path/filepath"
	"testing"
)

// The outermost notebook directory at or above a path is the one it
// addresses; the walk stops at the workspace root when one is given.
func TestOutermost(t *testing.T) {
	nb := map[string]bool{"/w/a": true, "/w/a/b/c": true, "/x": true}
	is := func(d string) bool { return nb[d] }
	for _, c := range []struct{ dir, top, want string }{
		{"/w/a/b/c/d", "/w", "/w/a"},
		{"/w/a/b/c", "/w/a/b", "/w/a/b/c"}, // /w/a is above the root
		{"/w/a", "/w", "/w/a"},
		{"/w/z", "/w", ""},
		{"/x/y", "", "/x"}, // no root: up to the file system's
		{"/x/y", "/x/y", ""},
		{"/elsewhere", "/w", ""}, // outside the root: no walk
	} {
		if got := Outermost(c.dir, c.top, is); got != c.want {
			t.Errorf("Outermost(%q, %q) = %q, want %q", c.dir, c.top, got, c.want)
		}
	}
}

// A new notebook directory would contain the first existing one strictly
// below it, named relative to it; the directory itself, one beside it and
// one that is gone do not count.
func TestContained(t *testing.T) {
	top := t.TempDir()
	mk := func(rel string) string {
		p := filepath.Join(top, rel)
		if err := os.MkdirAll(p, 0o777); err != nil {
			t.Fatal(err)
		}
		return RealPath(p)
	}
	dir := mk("ws")
	inner, deeper, beside := mk("ws/notes/b"), mk("ws/notes/a/deep"), mk("other")
	gone := filepath.Join(dir, "gone")
	if got := Contained(dir, []string{inner, dir, beside, gone, deeper}); got != "notes/a/deep" {
		t.Fatalf("Contained = %q, want notes/a/deep", got)
	}
	if got := Contained(dir, []string{dir, beside, gone}); got != "" {
		t.Fatalf("Contained = %q, want none", got)
	}
	// Through a symlink alias, the real path decides.
	alias := filepath.Join(top, "alias")
	if err := os.Symlink(dir, alias); err != nil {
		t.Skipf("symlinks: %v", err)
	}
	if got := Contained(alias, []string{inner}); got != "notes/b" {
		t.Fatalf("Contained through an alias = %q, want notes/b", got)
	}
}
