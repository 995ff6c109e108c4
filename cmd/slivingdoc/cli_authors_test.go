package main

// Authors through the real binary, on a format-4 store (the format that
// records them): two `serve` processes whose MCP clients introduce
// themselves by different names and one CLI `commit --author` edit one
// file; blame, log, log --json, show and log --author say who wrote what.

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/slivingdoc/slivingdoc/server"
)

// serveAs starts `slivingdoc serve --workspace-root <agent dir>` with an
// MCP client whose clientInfo is name and version, as a host sends it.
func (a *agent) serveAs(name, version string, extraEnv ...string) *mcpServer {
	t := a.nb.t
	t.Helper()
	if err := os.MkdirAll(a.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return a.serveClient(sdk.Implementation{Name: name, Version: version}, extraEnv, "serve", "--workspace-root", a.dir)
}

// logOut is one entry of log --json as a script reads it.
type logOut struct {
	Generation uint64 `json:"generation"`
	Author     string `json:"author"`
	Message    string `json:"message"`
}

func logJSONEntries(t *testing.T, a *agent, args ...string) []logOut {
	t.Helper()
	o := a.run(append([]string{"log", "--json"}, args...)...)
	var out []logOut
	if o.code != 0 || json.Unmarshal([]byte(o.stdout), &out) != nil {
		t.Fatalf("log --json:\n%s", o)
	}
	return out
}

func TestCLIAuthorsThreeWriters(t *testing.T) {
	nb := newNotebook(t, backends[0])
	seedInProcess(t, nb) // generation 1, claiming no author
	a, b, c := nb.agent("a"), nb.agent("b"), nb.agent("c")
	// The user part of a serve process's claim, fixed so the test can
	// name it (the host is the machine's).
	sa := a.serveAs("agent-alpha", "1.0", "USER=ana", "LOGNAME=ana")
	sb := b.serveAs("agent-beta", "2.5", "USER=ben", "LOGNAME=ben")
	const carol = "carol the reviewer"

	sa.pull()
	a.write("plan.md", "# Plan\none\ntwo\nthree\nfour\n")
	if g := generation(sa.commit("alpha writes the plan")); g != 2 {
		t.Fatalf("alpha at %d", g)
	}
	sb.pull()
	b.write("plan.md", "# Plan\none\nTWO, says beta\nthree\nfour\n")
	if g := generation(sb.commit("beta edits two")); g != 3 {
		t.Fatalf("beta at %d", g)
	}
	c.pull()
	c.write("plan.md", "# Plan\none\nTWO, says beta\nthree\nFOUR, says carol\n")
	if r := mustOK(t, c.run("commit", c.dir, "-m", "carol edits four", "--author", carol)); r.generation != 4 {
		t.Fatalf("carol at %d", r.generation)
	}

	alpha := regexp.MustCompile(`^agent-alpha 1\.0 \(ana@[^)]+\)$`)
	beta := regexp.MustCompile(`^agent-beta 2\.5 \(ben@[^)]+\)$`)
	isCarol := regexp.MustCompile("^" + carol + "$")
	byLine := []*regexp.Regexp{alpha, alpha, beta, alpha, isCarol}

	// blame names each line's author, in --json and in text.
	o := c.run("blame", "--json", "notes/plan.md")
	var bl blameOut
	if o.code != 0 || json.Unmarshal([]byte(o.stdout), &bl) != nil || len(bl.Lines) != len(byLine) {
		t.Fatalf("blame --json:\n%s", o)
	}
	for i, l := range bl.Lines {
		if !byLine[i].MatchString(l.Author) {
			t.Errorf("blame line %d: author %q, want %s", i+1, l.Author, byLine[i])
		}
	}
	o = c.run("blame", "notes/plan.md")
	textLines := strings.Split(strings.TrimSuffix(o.stdout, "\n"), "\n")
	if o.code != 0 || len(textLines) != len(byLine) {
		t.Fatalf("blame:\n%s", o)
	}
	for i, name := range []string{"agent-alpha 1.0 (ana@", "agent-alpha", "agent-beta 2.5 (ben@", "agent-alpha", carol} {
		if !strings.Contains(textLines[i], name) {
			t.Errorf("blame line %d does not name %q: %s", i+1, name, textLines[i])
		}
	}

	// log --json: each publication's author, "" for the one without.
	entries := logJSONEntries(t, c)
	wantAuthor := map[uint64]*regexp.Regexp{4: isCarol, 3: beta, 2: alpha, 1: regexp.MustCompile("^$")}
	if len(entries) != 4 {
		t.Fatalf("log --json: %+v", entries)
	}
	for _, en := range entries {
		if !wantAuthor[en.Generation].MatchString(en.Author) {
			t.Errorf("log --json generation %d: author %q, want %s", en.Generation, en.Author, wantAuthor[en.Generation])
		}
	}

	// log: "by AUTHOR" on each header line that has one, nothing on the
	// one without.
	o = c.run("log")
	headers := map[uint64]string{}
	for _, l := range strings.Split(o.stdout, "\n") {
		var g uint64
		if m := regexp.MustCompile(`^generation (\d+)  `).FindStringSubmatch(l); m != nil {
			_ = json.Unmarshal([]byte(m[1]), &g)
			headers[g] = l
		}
	}
	if o.code != 0 || len(headers) != 4 {
		t.Fatalf("log:\n%s", o)
	}
	if !strings.HasSuffix(headers[4], "Z  by "+carol) || !regexp.MustCompile(`Z  by agent-beta 2\.5 \(ben@[^)]+\)$`).MatchString(headers[3]) ||
		!regexp.MustCompile(`Z  by agent-alpha 1\.0 \(ana@[^)]+\)$`).MatchString(headers[2]) || !strings.HasSuffix(headers[1], "Z") {
		t.Errorf("log headers:\n%s", strings.Join([]string{headers[4], headers[3], headers[2], headers[1]}, "\n"))
	}
	// show prints the header as log does.
	if o := c.run("show", "3"); o.code != 0 || !regexp.MustCompile(`(?m)^generation 3  \S+  by agent-beta 2\.5 \(ben@`).MatchString(o.stdout) {
		t.Errorf("show 3:\n%s", o)
	}

	// log --author: a regular expression, case-sensitive unless (?i),
	// never matching a publication without an author.
	for _, tc := range []struct {
		pattern string
		want    []uint64
	}{
		{"^agent-", []uint64{3, 2}},
		{"beta|carol", []uint64{4, 3}},
		{"CAROL", nil},
		{"(?i)CAROL", []uint64{4}},
		{"ana@", []uint64{2}},
		{".", []uint64{4, 3, 2}},
		{"nobody", nil},
	} {
		var got []uint64
		for _, en := range logJSONEntries(t, c, "--author", tc.pattern) {
			got = append(got, en.Generation)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("log --author %q: generations %v, want %v", tc.pattern, got, tc.want)
		}
	}
	if o := c.run("log", "--author", "agent-beta", "-n", "5"); o.code != 0 || strings.Count(o.stdout, "generation ") != 1 || !strings.Contains(o.stdout, "generation 3  ") {
		t.Errorf("log --author (text):\n%s", o)
	}
	if o := c.run("log", "--author", "agent-(alpha"); o.code != 2 || o.stdout != "" || !strings.Contains(o.stderr, `--author "agent-(alpha": not a regular expression: missing closing )`) {
		t.Errorf("a bad pattern:\n%s", o)
	}
}

// An author is whatever a writer put in the store: log, show and blame
// print it to a terminal through the same safe-text path as messages and
// paths, so an escape sequence in it cannot drive the reader's terminal;
// --json carries it as it is.
func TestCLIAuthorIsSafeText(t *testing.T) {
	nb := newNotebook(t, backends[0])
	seedInProcess(t, nb)
	const hostile = "mallory\x1b]0;pwned\x07\x1b[31m red"
	// A writer that does not clean what it claims (the engine records the
	// context's author as it is; the front ends clean it before).
	if g := commitV4InProcess(t, nb, server.WithAuthor(context.Background(), hostile), "seed, by mallory\n", "hostile"); g != 2 {
		t.Fatalf("commit: generation %d, want 2", g)
	}

	r := nb.agent("r")
	for _, args := range [][]string{{"log"}, {"show", "2"}, {"blame", "seed.md"}} {
		o := r.run(args...)
		if o.code != 0 || !strings.Contains(o.stdout, "mallory") || strings.ContainsAny(o.stdout, "\x1b\x07") {
			t.Errorf("%q prints the author unsafely:\n%s", args, o)
		}
	}
	if got := logJSONEntries(t, r); len(got) != 2 || got[0].Author != hostile {
		t.Errorf("log --json: %+v", got)
	}
}
