package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/server/secrets/secretstest"
)

// A Finder file, a vim swap file and emacs backups beside a real edit:
// the edit commits, no dropping is published, a second client never sees
// one, and status lists them only with --ignored.
func TestCLIDroppingsAreLeftOut(t *testing.T) {
	forEachBackend(t, func(t *testing.T, nb *notebook) {
		a := nb.agent("a")
		a.pull()
		a.write("notes.md", "the real edit\n")
		a.write(".DS_Store", "\x00\x00\x00\x01Bud1\x00\x00")
		a.write(".notes.md.swp", "b0VIM 9.1\x00\x00\x00")
		a.write("notes.md~", "emacs backup\n")
		a.write("#notes.md#", "emacs autosave\n")
		a.write("sub/.#notes.md", "emacs lock\n")
		r := a.commit("edit")
		if !reflect.DeepEqual(r.files, map[string][2]int{"notes.md": {1, 0}}) {
			t.Fatalf("published %v", r.files)
		}
		b := nb.agent("b")
		b.pull()
		if got := b.files(); !reflect.DeepEqual(got, map[string]string{"notes.md": "the real edit\n"}) {
			t.Fatalf("second client sees %v", got)
		}
		b.write("notes.md", "the real edit\nfrom b\n")
		b.commit("b")
		a.pull()
		if got := a.read(".DS_Store"); got != "\x00\x00\x00\x01Bud1\x00\x00" {
			t.Fatalf("the dropping was touched: %q", got)
		}
		st := a.run("status", a.dir)
		if st.code != 0 || strings.Contains(st.stdout, ".DS_Store") {
			t.Fatalf("status without --ignored:\n%s", st)
		}
		st = a.run("status", a.dir, "--ignored")
		for _, p := range []string{"!  #notes.md#", "!  .DS_Store", "!  .notes.md.swp", "!  notes.md~", "!  sub/.#notes.md"} {
			if !strings.Contains(st.stdout, p+"\n") {
				t.Errorf("status --ignored lacks %q:\n%s", p, st)
			}
		}
	})
}

// An image blocks every commit (NUL bytes) until --ignore '*.png' (or
// SLIVINGDOC_IGNORE) leaves it out; --no-default-ignores brings the
// droppings back.
func TestCLIIgnorePattern(t *testing.T) {
	nb := newNotebook(t, backends[0])
	a := nb.agent("a")
	a.pull()
	a.write("diagram.png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	a.write("notes.md", "see the diagram\n")
	rep := mustFail(t, a.run("commit", a.dir, "-m", "image"))
	if f, ok := rep.file("diagram.png"); rep.code != "INVALID_CONTENT" || !ok || f.reason != "NUL_BYTE" {
		t.Fatalf("without --ignore: %+v", rep)
	}
	r := mustOK(t, a.run("commit", a.dir, "-m", "image", "--ignore", "*.png"))
	if !reflect.DeepEqual(r.files, map[string][2]int{"notes.md": {1, 0}}) {
		t.Fatalf("published %v", r.files)
	}
	a.write("notes.md", "see the diagram\nand the log\n")
	a.write("logs/run.log", "\x00")
	mustOK(t, a.runEnv([]string{"SLIVINGDOC_IGNORE=*.png,logs/"}, "commit", a.dir, "-m", "env"))
	a.write(".DS_Store", "\x00")
	rep = mustFail(t, a.runEnv([]string{"SLIVINGDOC_IGNORE=*.png,logs/"}, "commit", a.dir, "-m", "x", "--no-default-ignores"))
	if _, ok := rep.file(".DS_Store"); !ok {
		t.Fatalf("--no-default-ignores: %+v", rep)
	}
	for _, bad := range [][]string{{"--ignore", "!x"}, {"--ignore", "a/../b"}, {"--secrets", "maybe"}, {"--no-default-ignores=maybe"}} {
		if o := a.run(append([]string{"pull", a.dir}, bad...)...); o.code != 2 || o.stderr == "" {
			t.Errorf("bad setting %v:\n%s", bad, o)
		}
	}
}

// One case per credential format through the binary: refused with
// INVALID_CONTENT/INVALID_FILES, file reason SECRET and the lines, action
// FIX_FILES, nothing published; the secret is in no output, log line, store
// object or private file. --secrets allow publishes it.
func TestCLISecretsRefused(t *testing.T) {
	nb := newNotebook(t, backends[0])
	storeDir := strings.TrimPrefix(nb.env[0], "SLIVINGDOC_STORE=file://")
	a := nb.agent("a")
	a.pull()
	a.write("notes.md", "# notes\n")
	a.commit("start")
	gen := nb.generation()
	debug := []string{"LOG_LEVEL=debug"}
	for _, c := range secretstest.Cases(21) {
		a.write("notes.md", "# notes\n"+strings.Join(c.Lines, "\n")+"\n")
		o := a.runEnv(debug, "commit", a.dir, "-m", "leak")
		rep := mustFail(t, o)
		f, ok := rep.file("notes.md")
		want := fmt.Sprintf("%d-%d", 1+c.Start, 1+c.End)
		if rep.code != "INVALID_CONTENT" || rep.reason != "INVALID_FILES" || rep.action != "FIX_FILES" || rep.retryable || !ok || f.reason != "SECRET" || f.ranges != want {
			t.Fatalf("%s: report %+v, want lines %s\n%s", c.Rule, rep, want, o)
		}
		if strings.Contains(o.stdout, c.Secret) || strings.Contains(o.stderr, c.Secret) {
			t.Fatalf("%s: the secret is in the output:\n%s", c.Rule, o)
		}
		if !strings.Contains(o.stderr, c.Rule) {
			t.Errorf("%s: the log does not name the rule:\n%s", c.Rule, o.stderr)
		}
		s := a.runEnv(debug, "status", a.dir)
		if strings.Contains(s.stdout+s.stderr, c.Secret) {
			t.Fatalf("%s: the secret is in status", c.Rule)
		}
		for _, root := range []string{storeDir, a.priv} {
			notInTree(t, root, c.Secret)
		}
	}
	if g := nb.generation(); g != gen {
		t.Fatalf("generation %d after refusals, want %d", g, gen)
	}
	c := secretstest.Cases(22)[2]
	a.write("notes.md", "# notes\n"+c.Lines[0]+"\n")
	mustOK(t, a.run("commit", a.dir, "-m", "allowed", "--secrets", "allow"))
	b := nb.agent("b")
	b.pull() // pull never refuses
	if !strings.Contains(b.read("notes.md"), c.Secret) {
		t.Fatal("the allowed file was not published")
	}
	b.write("notes.md", b.read("notes.md")+"an edit elsewhere\n")
	b.commit("the existing line is not added") // default --secrets refuse
}

func notInTree(t *testing.T, root, secret string) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("the secret is in %s", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A user's file named like the engine's temporary files is ordinary
// content: published, and never removed by a later call (issue 14, item 7).
func TestCLIUserFileNamedLikeATemp(t *testing.T) {
	nb := newNotebook(t, backends[0])
	a := nb.agent("a")
	a.pull()
	name := ".slivingdoc-tmp-0123456789abcdef.tmp"
	a.write(name, "mine\n")
	a.commit("temp-like")
	a.pull()
	if got := a.read(name); got != "mine\n" {
		t.Fatalf("the file was removed or changed: %q", got)
	}
	b := nb.agent("b")
	b.pull()
	if got := b.read(name); got != "mine\n" {
		t.Fatalf("not published: %q", got)
	}
}

// Over MCP: notes_commit answers a credential with the domain error
// (INVALID_FILES, SECRET, ranges), and the secret appears in no response
// or log line (the harness checks every line against forbidden).
func TestMCPSecretRefused(t *testing.T) {
	a := newNotebook(t, backends[0]).agent("mcp")
	r := a.serveRaw()
	c := secretstest.Cases(31)[0] // AWS key ID and secret, lines 2-3
	r.forbidden = append(r.forbidden, c.Secret)
	r.initialize()
	if text, isErr, _ := r.toolText(2, ToolPullName, `{}`); isErr {
		t.Fatalf("pull: %s", text)
	}
	a.write("creds.md", strings.Join(c.Lines, "\n")+"\n")
	text, isErr, raw := r.toolText(3, ToolCommitName, `{"message":"leak"}`)
	if !isErr {
		t.Fatalf("the commit was accepted: %s", text)
	}
	var env struct {
		Code, Reason, Action string
		Files                []struct {
			Path, Reason string
			Ranges       []struct{ Start, End int }
		}
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		t.Fatal(err)
	}
	if env.Code != "INVALID_CONTENT" || env.Reason != "INVALID_FILES" || env.Action != "FIX_FILES" || len(env.Files) != 1 ||
		env.Files[0].Path != "creds.md" || env.Files[0].Reason != "SECRET" || fmt.Sprint(env.Files[0].Ranges) != "[{2 3}]" {
		t.Fatalf("envelope %s", raw)
	}
}
