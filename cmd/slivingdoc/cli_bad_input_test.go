//go:build unix

package main

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Every bad input gives a clear error naming the offending file, on pull
// and on commit, and nothing is published or deleted.
func TestCLIBadFiles(t *testing.T) {
	type bad struct{ path, reason string }
	cases := []struct {
		name  string
		setup func(t *testing.T, a *agent)
		want  []bad
	}{
		{"invalid UTF-8", func(t *testing.T, a *agent) { a.write("bad.md", "ok\n\xff\xfe\n") }, []bad{{"bad.md", "INVALID_UTF8"}}},
		{"NUL byte", func(t *testing.T, a *agent) { a.write("sub/zero.md", "a\x00b\n") }, []bad{{"sub/zero.md", "NUL_BYTE"}}},
		{"symlink inside", func(t *testing.T, a *agent) { symlink(t, "a.md", filepath.Join(a.dir, "link.md")) }, []bad{{"link.md", "SYMLINK"}}},
		{"symlink escaping", func(t *testing.T, a *agent) {
			outside := filepath.Join(t.TempDir(), "secret.md")
			if err := os.WriteFile(outside, []byte("secret\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			symlink(t, outside, filepath.Join(a.dir, "escape.md"))
		}, []bad{{"escape.md", "SYMLINK"}}},
		{"symlinked directory escaping", func(t *testing.T, a *agent) { symlink(t, t.TempDir(), filepath.Join(a.dir, "elsewhere")) }, []bad{{"elsewhere", "SYMLINK"}}},
		{"FIFO", func(t *testing.T, a *agent) {
			if err := syscall.Mkfifo(filepath.Join(a.dir, "pipe.md"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, []bad{{"pipe.md", "SPECIAL_FILE"}}},
		{"reserved character", func(t *testing.T, a *agent) { a.write("a:b.md", "x\n") }, []bad{{"a:b.md", "INVALID_NAME"}}},
		{"trailing dot", func(t *testing.T, a *agent) { a.write("dot.", "x\n") }, []bad{{"dot.", "INVALID_NAME"}}},
		{"device name", func(t *testing.T, a *agent) { a.write("CON", "x\n") }, []bad{{"CON", "INVALID_NAME"}}},
		{"not NFC", func(t *testing.T, a *agent) { a.write("cafe\u0301.md", "x\n") }, []bad{{"cafe\u0301.md", "INVALID_NAME"}}},
		{"case collision", func(t *testing.T, a *agent) { a.write("Note.md", "x\n"); a.write("note.md", "y\n") }, []bad{{"", "NAME_COLLISION"}}},
		{"every offending file", func(t *testing.T, a *agent) {
			a.write("bad.md", "\xff\n")
			a.write("d/zero.md", "\x00")
			a.write("a:b.md", "x\n")
		}, []bad{{"bad.md", "INVALID_UTF8"}, {"d/zero.md", "NUL_BYTE"}, {"a:b.md", "INVALID_NAME"}}},
	}
	forEachBackend(t, func(t *testing.T, nb *notebook) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				a := nb.agent("a")
				a.pull()
				a.write("a.md", "accepted in "+tc.name+"\n")
				accepted := a.commit("accepted").generation
				a.write("a.md", "accepted\nand a local edit\n")
				a.write("keep.md", "local only\n")
				tc.setup(t, a)
				local := a.files()
				links := symlinks(t, a.dir)

				for _, op := range [][]string{{"commit", a.dir, "-m", "must be refused"}, {"pull", a.dir}} {
					rep := mustFail(t, a.run(op...))
					if rep.code != "INVALID_CONTENT" || rep.reason != "INVALID_FILES" || rep.action != "FIX_FILES" || rep.retryable {
						t.Fatalf("%s: report %+v", op[0], rep)
					}
					for _, w := range tc.want {
						found := false
						for _, f := range rep.files {
							found = found || (f.reason == w.reason && (w.path == "" || f.path == w.path))
						}
						if !found {
							t.Errorf("%s: report does not name %q with %s: %+v", op[0], w.path, w.reason, rep.files)
						}
					}
					for _, f := range rep.files {
						if f.path == "a.md" || f.path == "keep.md" {
							t.Errorf("%s: a good file is reported: %+v", op[0], f)
						}
					}
					if !maps.Equal(a.files(), local) || !maps.Equal(symlinks(t, a.dir), links) {
						t.Fatalf("%s changed the directory: %q", op[0], a.files())
					}
				}
				if g := nb.generation(); g != accepted {
					t.Fatalf("generation %d, want %d: something was published", g, accepted)
				}
			})
		}
	})
}

// Bad requests: a path outside the workspace root, and blank, NUL,
// invalid or oversize messages. Nothing is published; a message at the
// limit is accepted.
func TestCLIBadRequests(t *testing.T) {
	forEachBackend(t, func(t *testing.T, nb *notebook) {
		a := nb.agent("a")
		a.pull()
		a.write("a.md", "one\n")
		a.commit("one")
		a.write("a.md", "two\n")

		msgFile := func(content string) string {
			p := filepath.Join(t.TempDir(), "msg")
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}
		outside := t.TempDir()
		cases := []struct {
			name         string
			args         []string
			code, reason string
		}{
			{"commit outside the root", []string{"commit", outside, "--workspace-root", a.dir, "-m", "x"}, "INVALID_REQUEST", "PATH_OUTSIDE_ROOT"},
			{"pull outside the root", []string{"pull", outside, "--workspace-root", a.dir}, "INVALID_REQUEST", "PATH_OUTSIDE_ROOT"},
			{"blank message", []string{"commit", a.dir, "-m", " \t\n\u00a0\u3000"}, "INVALID_REQUEST", "BLANK_MESSAGE"},
			{"empty message", []string{"commit", a.dir, "-m", ""}, "INVALID_REQUEST", "BLANK_MESSAGE"},
			{"NUL in message", []string{"commit", a.dir, "-F", msgFile("a\x00b")}, "INVALID_REQUEST", "INVALID_ARGUMENT"},
			{"invalid UTF-8 message", []string{"commit", a.dir, "-F", msgFile("a\xffb")}, "INVALID_REQUEST", "INVALID_ARGUMENT"},
			{"oversize message", []string{"commit", a.dir, "-m", strings.Repeat("x", 16385)}, "INVALID_REQUEST", "INVALID_ARGUMENT"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				rep := mustFail(t, a.run(tc.args...))
				if rep.code != tc.code || rep.reason != tc.reason || rep.action != "FIX_REQUEST" || rep.retryable {
					t.Fatalf("report %+v", rep)
				}
				if got := a.read("a.md"); got != "two\n" {
					t.Fatalf("local edit lost: %q", got)
				}
			})
		}
		if g := nb.generation(); g != 1 {
			t.Fatalf("generation %d after refused commits", g)
		}
		if r := a.commit(strings.Repeat("é", 8192)); r.generation != 2 {
			t.Fatalf("a 16,384-byte message: %+v", r)
		}
	})
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// symlinks maps every symlink under dir to its target.
func symlinks(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			dst, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[p] = dst
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Hostile file names reach the terminal escaped: one with U+202E, which
// would display the name reversed (accepted, and named in the result), and
// names with an escape sequence or bytes that are not UTF-8 (refused, and
// named in the report).
func TestHostileFileNamesArePrintedEscaped(t *testing.T) {
	a := newNotebook(t, backends[0]).agent("a")
	a.pull()
	a.write("evil\u202Egnp.md", "x\n")
	o := a.run("commit", a.dir, "-m", "names")
	if o.code != 0 {
		t.Fatalf("commit: %s", o)
	}
	if strings.Contains(o.stdout+o.stderr, "\u202E") || !strings.Contains(o.stdout, `evil\u202egnp.md`) {
		t.Fatalf("the name is not shown escaped:\n%q", o.stdout)
	}
	for _, c := range []struct{ name, raw, shown string }{
		{"esc\x1b[2Jname.md", "\x1b", `esc\x1b[2Jname.md`},
		{"bad\xffname.md", "\xff", `bad\xffname.md`},
	} {
		a.write(c.name, "z\n")
		o = a.run("commit", a.dir, "-m", "bad name")
		if o.code != 1 {
			t.Fatalf("%q was accepted: %s", c.name, o)
		}
		if strings.Contains(o.stdout+o.stderr, c.raw) || !strings.Contains(o.stdout, "file: "+c.shown+" · ") {
			t.Fatalf("the refused name %q is not shown escaped:\n%q\n%q", c.name, o.stdout, o.stderr)
		}
		a.remove(c.name)
	}
}

// A command that reads a notebook directory which does not exist says so
// and how to make it (pull), without a system call's wording, and creates
// nothing; pull itself makes it.
func TestCLIMissingDirectory(t *testing.T) {
	nb := newNotebook(t, backends[0])
	a := nb.agent("a")
	for _, args := range [][]string{{"status", a.dir}, {"commit", a.dir, "-m", "x"}, {"diff", a.dir}} {
		o := a.run(args...)
		if o.code != 2 || !strings.Contains(o.stderr, a.dir+" does not exist") ||
			!strings.Contains(o.stderr, "'slivingdoc pull "+a.dir+"'") || strings.Contains(o.stderr, "stat ") {
			t.Fatalf("want exit 2 naming the directory and pull:\n%s", o)
		}
		if _, err := os.Stat(a.dir); !os.IsNotExist(err) {
			t.Fatalf("%s: the directory was created (%v)", args[0], err)
		}
	}
	a.pull()
	if _, err := os.Stat(a.dir); err != nil {
		t.Fatalf("pull did not make the directory: %v", err)
	}
}
