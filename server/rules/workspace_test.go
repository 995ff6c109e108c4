package rules

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// workspace is a root with a default directory "notes", a file, and a
// symlink that leads outside the root.
func workspace(t *testing.T) (Workspace, string) {
	t.Helper()
	top := t.TempDir()
	root, outside := filepath.Join(top, "ws"), filepath.Join(top, "outside")
	for _, d := range []string{filepath.Join(root, "notes"), outside} {
		if err := os.MkdirAll(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "file.md"), []byte("x\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
		t.Skipf("symlinks: %v", err)
	}
	return Workspace{Root: root, Default: filepath.Join(root, "notes")}, outside
}

// A request path resolves at or below the root, or is refused with the
// refusal that names why; a directory not there yet is fine.
func TestResolve(t *testing.T) {
	w, outside := workspace(t)
	for in, want := range map[string]string{
		"":                                    w.Default,
		"sub":                                 filepath.Join(w.Default, "sub"),
		"..":                                  w.Root,
		filepath.Join(w.Root, "new", "x"):     filepath.Join(w.Root, "new", "x"),
		filepath.Join(w.Root, "a", "..", "b"): filepath.Join(w.Root, "b"),
	} {
		if got, err := w.Resolve(in); err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, want := range map[string]error{
		"../..":                                ErrOutsideRoot,
		outside:                                ErrOutsideRoot,
		filepath.Join(w.Root, "escape"):        ErrOutsideRoot,
		filepath.Join(w.Root, "escape", "new"): ErrOutsideRoot,
		filepath.Join(w.Root, "file.md"):       ErrNotDirectory,
		filepath.Join(w.Root, "file.md", "x"):  ErrNotDirectory,
		"a\x00b":                               ErrBadPath,
		"bad \xff":                             ErrBadPath,
		strings.Repeat("d/", 2049):             ErrBadPath,
		// Short enough as given, too long once taken from the default.
		strings.Repeat("d", 4096-1): ErrBadPath,
	} {
		if got, err := w.Resolve(in); !errors.Is(err, want) {
			t.Errorf("Resolve(%.40q) = %q, %v; want %v", in, got, err, want)
		}
	}
}

// Open creates a directory through the root, and refuses one a symlink
// would put outside it without creating anything there.
func TestOpen(t *testing.T) {
	w, outside := workspace(t)
	r, err := w.Open(filepath.Join(w.Root, "made", "here"), true)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if st, err := os.Stat(filepath.Join(w.Root, "made", "here")); err != nil || !st.IsDir() {
		t.Fatalf("not created: %v", err)
	}
	if _, err := w.Open(filepath.Join(w.Root, "escape", "new"), true); !errors.Is(err, ErrOutsideRoot) {
		t.Fatalf("Open through the symlink: %v, want ErrOutsideRoot", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "new")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("created outside the root: %v", err)
	}
	if _, err := w.Open(filepath.Join(w.Root, "missing"), false); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Open of a missing directory: %v, want not exist", err)
	}
}

func TestWithin(t *testing.T) {
	for _, c := range []struct {
		root, p string
		want    bool
	}{
		{"/a", "/a", true}, {"/a", "/a/b", true}, {"/a", "/ab", false},
		{"/a", "/", false}, {"/a/b", "/a", false}, {"/a", "/a/..b", true},
	} {
		if got := Within(c.root, c.p); got != c.want {
			t.Errorf("Within(%q, %q) = %v", c.root, c.p, got)
		}
	}
}
