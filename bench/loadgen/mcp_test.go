package main

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// The serve driver speaks MCP to the built binary: a pull and a commit
// come back OK with the accepted generation, an invalid call comes back as
// its domain error's code, and the session ends cleanly when stdin closes.
func TestServeDriverPullCommit(t *testing.T) {
	r := testRunner(t)
	ctx := context.Background()
	st := r.stores["file"]
	nb := r.newNotebook(st, st.newLocation(), filepath.Join(r.work, "one"), false)
	if err := os.MkdirAll(nb.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := startServe(ctx, nb.bin, nb.env, nb.dir)
	if err != nil {
		t.Fatal(err)
	}
	nb.mcp = s
	o, err := mustOK(nb.pull(ctx))
	if err != nil {
		t.Fatal(err)
	}
	if o.Generation != 0 || o.Stdout != nb.dir {
		t.Fatalf("pull of a new notebook: generation %d, text %q (want 0, %q)", o.Generation, o.Stdout, nb.dir)
	}
	if err := os.WriteFile(filepath.Join(nb.dir, "a.md"), []byte("one line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, err = mustOK(nb.commit(ctx, "first"))
	if err != nil {
		t.Fatal(err)
	}
	if o.Generation != 1 || o.Wall <= 0 {
		t.Fatalf("commit: generation %d, wall %v", o.Generation, o.Wall)
	}
	if runtime.GOOS == "linux" && (o.CPU <= 0 || o.RSSKiB <= 0) {
		t.Fatalf("commit: CPU %v, peak RSS %d KiB not measured", o.CPU, o.RSSKiB)
	}
	o, err = nb.commit(ctx, " ")
	if err != nil {
		t.Fatal(err)
	}
	if o.Code != "INVALID_REQUEST" || o.Reason == "" {
		t.Fatalf("blank message: code %q reason %q", o.Code, o.Reason)
	}
	// The CLI sees what the serve process published.
	nb.mcp = nil
	if err := s.close(); err != nil {
		t.Fatal(err)
	}
	other := r.newNotebook(st, nb.loc, filepath.Join(r.work, "two"), false)
	if o, err := mustOK(other.pull(ctx)); err != nil || o.Generation != 1 {
		t.Fatalf("CLI pull after serve commit: generation %d, %v", o.Generation, err)
	}
}

// Serve writers racing on one notebook: every commit accepted, every
// accepted line present exactly once, on disjoint files and on one shared
// file (appends at its end, and sections).
func TestContentionServeAuditPasses(t *testing.T) {
	for _, mode := range []string{modeDisjoint, modeShared, modeSections} {
		t.Run(mode, func(t *testing.T) {
			r := testRunner(t)
			res, err := r.contentionBy(context.Background(), r.stores["file"], mode, 3, driverServe, 4)
			if err != nil {
				t.Fatal(err)
			}
			if res.Driver != driverServe || res.Accepted != 9 || !res.Check.OK() || res.Check.Expected != 9 || int(res.Generations) != res.Accepted {
				t.Fatalf("driver %q, accepted %d/9, generations %d, audit %+v", res.Driver, res.Accepted, res.Generations, res.Check)
			}
			if res.Processes < res.Accepted {
				t.Fatalf("%d calls counted for %d accepted commits", res.Processes, res.Accepted)
			}
		})
	}
}
