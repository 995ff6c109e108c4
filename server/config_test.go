package server

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
)

func TestNewRefusesBadConfig(t *testing.T) {
	ws := t.TempDir()
	store := memstore.New()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(ws, link); err != nil {
		t.Fatal(err)
	}
	for name, cfg := range map[string]Config{
		"no store":             {PrivateRoot: t.TempDir(), WorkspaceRoot: ws},
		"no private root":      {Store: store, WorkspaceRoot: ws},
		"private inside":       {Store: store, PrivateRoot: filepath.Join(ws, "p"), WorkspaceRoot: ws},
		"private is workspace": {Store: store, PrivateRoot: ws, WorkspaceRoot: ws},
		"private via symlink":  {Store: store, PrivateRoot: filepath.Join(link, "p"), WorkspaceRoot: ws},
		"default outside":      {Store: store, PrivateRoot: t.TempDir(), WorkspaceRoot: ws, DefaultDir: t.TempDir()},
		"set escapes":          {Store: store, PrivateRoot: t.TempDir(), WorkspaceRoot: ws, Writable: []string{"../x"}},
		"entry in both sets":   {Store: store, PrivateRoot: t.TempDir(), WorkspaceRoot: ws, Writable: []string{"a"}, ReadOnly: []string{"a"}},
	} {
		if e, err := New(cfg); err == nil {
			e.Close()
			t.Errorf("%s: accepted", name)
		}
	}
	// The workspace inside the private root is fine (P holds L's state by hash).
	e, err := New(Config{Store: store, PrivateRoot: t.TempDir(), WorkspaceRoot: ws})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if d, err := e.ResolveDir(""); err != nil || d != ws {
		t.Fatalf("default dir %q %v, want the workspace root", d, err)
	}
}

func TestResolveDir(t *testing.T) {
	a := newAgent(t, memstore.New())
	home, _ := os.UserHomeDir()
	for in, want := range map[string]string{
		"":                         a.dir,
		"sub":                      filepath.Join(a.dir, "sub"),
		"./sub/../other/":          filepath.Join(a.dir, "other"),
		"..":                       a.ws,
		filepath.Join(a.ws, "x//"): filepath.Join(a.ws, "x"),
	} {
		if got, err := a.e.ResolveDir(in); err != nil || got != want {
			t.Errorf("ResolveDir(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	// "~/" expands to the home directory before the root check.
	e, err := New(Config{Store: memstore.New(), PrivateRoot: t.TempDir(), WorkspaceRoot: home})
	if err == nil {
		defer e.Close()
		if got, err := e.ResolveDir("~/notes"); err != nil || got != filepath.Join(home, "notes") {
			t.Errorf("~/notes resolved to %q, %v", got, err)
		}
	}
	w, r := a.e.PathSets()
	if w == nil || r == nil || len(w)+len(r) != 0 {
		t.Fatalf("empty sets must be non-nil and empty: %v %v", w, r)
	}
}
