//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// Issue 14 item 4 on the CLI: `pull nb; pull nb/sub; commit nb` publishes
// no nb/sub copy of the notebook.
func TestCLISubdirectoryPullRunsOnTheEnclosingNotebook(t *testing.T) {
	forEachBackend(t, func(t *testing.T, nb *notebook) {
		a := nb.agent("a")
		a.pull()
		a.write("o.md", "o\n")
		a.write("sub/s.md", "s\n")
		a.commit("init")
		mustOK(t, a.run("pull", filepath.Join(a.dir, "sub")))
		if _, err := os.Stat(filepath.Join(a.dir, "new")); !os.IsNotExist(err) {
			t.Fatal("setup")
		}
		mustOK(t, a.run("pull", filepath.Join(a.dir, "new", "deeper")))
		if _, err := os.Stat(filepath.Join(a.dir, "new")); !os.IsNotExist(err) {
			t.Fatalf("a pull below the notebook created a directory in it: %v", err)
		}
		a.write("sub/t.md", "t\n")
		mustOK(t, a.run("commit", filepath.Join(a.dir, "sub"), "-m", "from sub"))
		a.commit("x")
		obs := nb.agent("obs")
		obs.pull()
		got := obs.files()
		if len(got) != 3 || got["o.md"] != "o\n" || got["sub/s.md"] != "s\n" || got["sub/t.md"] != "t\n" {
			t.Fatalf("published %q", got)
		}
	})
}

// The same through a symbolic link to the notebook directory: the
// subdirectory's ancestors are then not their own resolved paths, and the
// notebook is still found above it (the alias), not started in it.
func TestCLISubdirectoryThroughSymlinkRunsOnTheEnclosingNotebook(t *testing.T) {
	nb := newNotebook(t, backends[0])
	a := nb.agent("a")
	ws := t.TempDir()
	a.dir = filepath.Join(ws, "notes")
	a.pull()
	a.write("o.md", "o\n")
	a.write("sub/s.md", "s\n")
	a.commit("init")
	alias := filepath.Join(ws, "alias")
	if err := os.Symlink("notes", alias); err != nil {
		t.Fatal(err)
	}
	mustOK(t, a.run("pull", filepath.Join(alias, "sub")))
	if _, err := os.Stat(filepath.Join(a.dir, "sub", "o.md")); !os.IsNotExist(err) {
		t.Fatalf("a pull of a subdirectory through the alias started a notebook there: %v", err)
	}
	a.write("sub/t.md", "t\n")
	mustOK(t, a.run("commit", filepath.Join(alias, "sub"), "-m", "through the alias"))
	obs := nb.agent("obs")
	obs.pull()
	if got := obs.files(); len(got) != 3 || got["sub/t.md"] != "t\n" {
		t.Fatalf("published %q", got)
	}
}

// A new notebook directory containing an existing one is refused; the
// report names the other directory relative to the request.
func TestCLINewNotebookContainingAnotherIsRefused(t *testing.T) {
	nb := newNotebook(t, backends[0])
	a := nb.agent("a")
	ws := t.TempDir()
	a.dir = filepath.Join(ws, "notes")
	inner := filepath.Join(a.dir, "deep", "inner")
	mustOK(t, a.run("pull", inner, "--workspace-root", ws))
	r := mustFail(t, a.run("pull", a.dir, "--workspace-root", ws))
	if r.code != "INVALID_REQUEST" || r.reason != "CONTAINS_NOTEBOOK" {
		t.Fatalf("%+v", r)
	}
	if o := a.run("pull", a.dir, "--workspace-root", ws); !strings.Contains(o.stdout, "deep/inner") || strings.Contains(o.stdout, a.priv) {
		t.Fatalf("the report does not name deep/inner (or shows P):\n%s", o)
	}
}

// Issue 14 item 7: a refused pull creates nothing outside the workspace
// root, whether the path leaves it lexically or through a symlink.
func TestCLIPullOutsideTheRootCreatesNothing(t *testing.T) {
	nb := newNotebook(t, backends[0])
	a := nb.agent("a")
	ws := filepath.Join(filepath.Dir(a.dir), "ws")
	outside := filepath.Join(t.TempDir(), "outside")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(outside, "a", "b"), filepath.Join(ws, "link", "c", "d")} {
		r := mustFail(t, a.run("pull", p, "--workspace-root", ws))
		if r.code != "INVALID_REQUEST" || r.reason != "PATH_OUTSIDE_ROOT" {
			t.Fatalf("pull %s: %+v", p, r)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("created outside the root: %v", entries)
	}
	// Inside the root, a missing directory (and a missing root) is created.
	fresh := filepath.Join(filepath.Dir(a.dir), "fresh")
	mustOK(t, a.run("pull", filepath.Join(fresh, "x", "nb"), "--workspace-root", fresh))
	if fi, err := os.Stat(filepath.Join(fresh, "x", "nb")); err != nil || !fi.IsDir() {
		t.Fatalf("the notebook directory was not created: %v", err)
	}
}

// A workspace root inside the private root is a setup error (exit 2).
func TestCLIWorkspaceInsidePrivateRootRefused(t *testing.T) {
	nb := newNotebook(t, backends[0])
	a := nb.agent("a")
	ws := filepath.Join(a.priv, "ws")
	o := a.run("pull", filepath.Join(ws, "nb"), "--workspace-root", ws)
	if o.code != 2 || !strings.Contains(o.stderr, "workspace root must not be inside the private root") {
		t.Fatalf("want a setup error:\n%s", o)
	}
	if _, err := os.Stat(filepath.Join(ws, "nb")); !os.IsNotExist(err) {
		t.Fatalf("the refused pull created its directory: %v", err)
	}
}

// Credentials in --store and a query or fragment in --endpoint are never
// echoed.
func TestCLIStoreAndEndpointSecretsNotEchoed(t *testing.T) {
	nb := newNotebook(t, backends[0])
	a := nb.agent("a")
	for _, args := range [][]string{
		{"status", a.dir, "--store", "s3://AKIAIOSFODNN7EXAMPLE:hunter2@bucket/p"},
		{"status", a.dir, "--store", "s3://bucket/p?X-Amz-Security-Token=hunter2"},
		{"status", a.dir, "--store", "https://AKIAIOSFODNN7EXAMPLE:hunter2@host/p?t=hunter2#hunter2"},
		{"status", a.dir, "--store", "s3://bucket/p", "--endpoint", "http://127.0.0.1:9/?X-Amz-Security-Token=hunter2"},
		{"status", a.dir, "--store", "s3://bucket/p", "--endpoint", "http://127.0.0.1:9/#hunter2"},
	} {
		o := a.run(args...)
		if o.code != 2 || strings.Contains(o.stdout+o.stderr, "hunter2") || strings.Contains(o.stdout+o.stderr, "AKIA") {
			t.Fatalf("want a usage error that echoes no secret:\n%s", o)
		}
	}
}

// commit -F on a FIFO nobody writes ends at SIGINT or SIGTERM.
func TestCLICommitMessageFIFOInterrupted(t *testing.T) {
	nb := newNotebook(t, backends[0])
	a := nb.agent("a")
	a.pull()
	fifo := filepath.Join(t.TempDir(), "msg")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		cmd := exec.Command(a.bin, "commit", a.dir, "-F", fifo)
		cmd.Env = a.env
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Signal once the command waits on the FIFO: earlier, before its
		// handler is installed, the default action would end it (a loaded
		// machine takes its time to get there).
		waitOnFIFO(t, cmd.Process.Pid)
		cmd.Process.Signal(sig)
		// A command that ignores the signal blocks here until the test
		// binary's timeout fails the test.
		_ = cmd.Wait()
		if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
			t.Fatalf("%v: exit %d, want %d", sig, code, exitInterrupted)
		}
	}
}

// A path that is a regular file is INVALID_REQUEST / PATH_NOT_DIRECTORY
// (exit 1, a report), as over MCP, with and without --workspace-root.
func TestCLIPathIsAFile(t *testing.T) {
	nb := newNotebook(t, backends[0])
	a := nb.agent("a")
	a.pull()
	a.write("f.md", "x\n")
	f := filepath.Join(a.dir, "f.md")
	for _, args := range [][]string{{"pull", f}, {"commit", f, "-m", "x"}, {"status", f}, {"pull", f, "--workspace-root", a.dir}} {
		r := mustFail(t, a.run(args...))
		if r.code != "INVALID_REQUEST" || r.reason != "PATH_NOT_DIRECTORY" {
			t.Fatalf("%v: %+v", args, r)
		}
	}
}

// A lost or corrupt baseline is refused (BASELINE_LOST, nothing changed);
// moving the files aside and pulling into the emptied directory recovers.
func TestCLILostOrCorruptBaseline(t *testing.T) {
	for _, damage := range []string{"lost", "corrupt"} {
		t.Run(damage, func(t *testing.T) {
			nb := newNotebook(t, backends[0])
			a := nb.agent("a")
			a.pull()
			a.write("a.md", "a\n")
			a.write("gone.md", "g\n")
			a.commit("one")
			a.remove("gone.md")
			a.write("a.md", "a\nedit\n")
			baselines, _ := filepath.Glob(filepath.Join(a.priv, "dirs", "*", "baseline"))
			if len(baselines) != 1 {
				t.Fatalf("baselines %v", baselines)
			}
			var err error
			if damage == "lost" {
				err = os.Remove(baselines[0])
			} else {
				err = os.WriteFile(baselines[0], []byte("SLDBASE1 torn"), 0o600)
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"commit", a.dir, "-m", "x"}, {"status", a.dir}} {
				r := mustFail(t, a.run(args...))
				if r.code != "ENGINE_FAILED" || r.reason != "BASELINE_LOST" || r.action != "CHECK_HOST" {
					t.Fatalf("%v: %+v", args, r)
				}
			}
			if got := a.files(); len(got) != 1 || got["a.md"] != "a\nedit\n" {
				t.Fatalf("a refused call changed L: %q", got)
			}
			// A pull adopts the directory as one without a record
			// (docs/local-state.md L7): the edit is kept beside the
			// notebook's text, and the deleted file comes back.
			r := mustFail(t, a.run("pull", a.dir))
			if r.code != "CONTENT_CONFLICT" || len(r.files) != 1 || r.files[0].path != "a.md" || r.files[0].reason != "NO_RECORD" {
				t.Fatalf("pull: %+v", r)
			}
			if got := a.files(); len(got) != 2 || got["gone.md"] != "g\n" || got["a.md"] != "<<<<<<< local\na\nedit\n=======\na\n>>>>>>> remote\n" {
				t.Fatalf("fresh pull: %q", got)
			}
		})
	}
}

// A commit through a symlink alias and one through the real path at once
// wait for each other (one lock by resolved identity). Each round another
// writer commits first, so both must rewrite L; before, the two raced on
// the rewrite and one failed RECOVERY_FAILURE.
func TestCLICommitThroughSymlinkAliasWaits(t *testing.T) {
	nb := newNotebook(t, backends[0])
	a := nb.agent("a")
	ws := t.TempDir()
	a.dir = filepath.Join(ws, "notes")
	a.pull()
	alias := filepath.Join(ws, "alias")
	if err := os.Symlink("notes", alias); err != nil {
		t.Fatal(err)
	}
	b := nb.agent("b")
	b.pull()
	for round := range 6 {
		b.write("b"+strconv.Itoa(round)+".md", "b\n")
		b.commit("b")
		a.write("n.md", lines(3+round, nil))
		var wg sync.WaitGroup
		outs := make([]outcome, 2)
		for i, dir := range []string{a.dir, alias} {
			wg.Go(func() { outs[i] = a.run("commit", dir, "-m", "m", "--workspace-root", ws) })
		}
		wg.Wait()
		for _, o := range outs {
			if o.code != 0 {
				t.Fatalf("round %d:\n%s", round, o)
			}
		}
	}
	if g := nb.generation(); g != 12 {
		t.Fatalf("generation %d, want 12 (each round's two changes once)", g)
	}
}
