package main

// The diffs of log -p, show and diff are real unified diffs: applied with
// patch -p1 and with git apply to the earlier version they give the later
// one byte for byte, over generated note edits (CRLF files, files without
// a final newline, empty files, names with spaces, adds and deletes).

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// corpusGen edits a notebook tree at random, deterministically.
type corpusGen struct {
	r    *rand.Rand
	next int
}

var corpusWords = strings.Fields("the agent merge line commit pull note todo done plan idea review store pack tree cache 42 - * # ```")

func (g *corpusGen) line() string {
	n := 1 + g.r.IntN(6)
	w := make([]string, n)
	for i := range w {
		w[i] = corpusWords[g.r.IntN(len(corpusWords))]
	}
	if g.r.IntN(8) == 0 {
		return "" // blank lines, as notes have them
	}
	return strings.Join(w, " ")
}

// file is a new file's content: lines with LF or CRLF, sometimes without
// a final newline, sometimes empty.
func (g *corpusGen) file() string {
	if g.r.IntN(12) == 0 {
		return ""
	}
	eol := "\n"
	if g.r.IntN(4) == 0 {
		eol = "\r\n"
	}
	var b strings.Builder
	for range 1 + g.r.IntN(30) {
		b.WriteString(g.line() + eol)
	}
	s := b.String()
	if g.r.IntN(4) == 0 {
		s = strings.TrimSuffix(s, eol)
	}
	return s
}

// edit changes content: lines inserted, deleted or replaced, the final
// newline toggled now and then.
func (g *corpusGen) edit(s string) string {
	eol := "\n"
	if strings.Contains(s, "\r\n") {
		eol = "\r\n"
	}
	final := strings.HasSuffix(s, "\n")
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for range 1 + g.r.IntN(4) {
		at := 0
		if len(lines) > 0 {
			at = g.r.IntN(len(lines) + 1)
		}
		switch op := g.r.IntN(3); {
		case op == 0 || len(lines) == 0 || at == len(lines):
			add := []string{}
			for range 1 + g.r.IntN(3) {
				add = append(add, g.line()+eol)
			}
			lines = append(lines[:at], append(add, lines[at:]...)...)
		case op == 1:
			lines = append(lines[:at], lines[min(at+1+g.r.IntN(3), len(lines)):]...)
		default:
			lines[at] = g.line() + eol
		}
	}
	out := strings.Join(lines, "")
	if g.r.IntN(6) == 0 {
		final = !final
	}
	if !final {
		out = strings.TrimSuffix(strings.TrimSuffix(out, "\n"), "\r")
	} else if out != "" && !strings.HasSuffix(out, "\n") {
		out += eol
	}
	return out
}

// step edits tree: adds, deletes and rewrites a few files.
func (g *corpusGen) step(tree map[string]string) map[string]string {
	next := map[string]string{}
	for p, c := range tree {
		next[p] = c
	}
	paths := make([]string, 0, len(next))
	for p := range next {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for range 1 + g.r.IntN(4) {
		switch op := g.r.IntN(5); {
		case op == 0 || len(paths) == 0:
			dir := []string{"", "notes/", "notes/deep/", "with space/"}[g.r.IntN(4)]
			g.next++
			next[fmt.Sprintf("%sn%03d.md", dir, g.next)] = g.file()
		case op == 1:
			delete(next, paths[g.r.IntN(len(paths))])
		default:
			p := paths[g.r.IntN(len(paths))]
			if c, ok := next[p]; ok {
				next[p] = g.edit(c)
			}
		}
	}
	return next
}

// writeTree makes dir hold exactly tree.
func writeTreeDir(t *testing.T, dir string, tree map[string]string) {
	t.Helper()
	for p, c := range tree {
		f := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// applyBoth applies patch to a copy of from with patch -p1 and with git
// apply, and wants to, byte for byte.
func applyBoth(t *testing.T, what, patch string, from, to map[string]string) {
	t.Helper()
	for _, tool := range []string{"patch", "git"} {
		dir := t.TempDir()
		writeTreeDir(t, dir, from)
		pf := filepath.Join(t.TempDir(), "p.diff")
		if err := os.WriteFile(pf, []byte(patch), 0o644); err != nil {
			t.Fatal(err)
		}
		var cmd *exec.Cmd
		if tool == "patch" {
			cmd = exec.Command("patch", "-p1", "--batch", "--no-backup-if-mismatch", "-d", dir, "-i", pf)
		} else {
			cmd = exec.Command("git", "apply", "-p1", pf)
			cmd.Dir = dir
			cmd.Env = []string{"HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C"}
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		cmd.Stdout = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %s failed: %v\n%s\n--- patch\n%s", what, tool, err, stderr.String(), patch)
		}
		if got := readTree(t, dir); fmt.Sprintf("%q", got) != fmt.Sprintf("%q", to) {
			t.Fatalf("%s: %s gives\n %q\nwant\n %q\n--- patch\n%s", what, tool, got, to, patch)
		}
	}
}

var reDiffStart = regexp.MustCompile(`(?m)^diff --git `)

// patchOf returns the patch part of one show / log -p entry.
func patchOf(entry string) string {
	loc := reDiffStart.FindStringIndex(entry)
	if loc == nil {
		return ""
	}
	return entry[loc[0]:]
}

func TestCLIPatchesApply(t *testing.T) {
	for _, tool := range []string{"patch", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	nb := newNotebook(t, backends[0])
	a := nb.agent("a")
	a.pull()
	g := &corpusGen{r: rand.New(rand.NewPCG(20261201, 21))}
	trees := []map[string]string{{}} // trees[gen]
	const gens = 24
	for gen := 1; gen <= gens; gen++ {
		prev := trees[gen-1]
		next := g.step(prev)
		for p := range prev {
			if _, ok := next[p]; !ok {
				a.remove(p)
			}
		}
		for p, c := range next {
			if old, ok := prev[p]; !ok || old != c {
				a.write(p, c)
			}
		}
		d := a.run("diff", a.dir)
		if d.code != 0 {
			t.Fatalf("%s", d)
		}
		applyBoth(t, fmt.Sprintf("diff of the local edits before generation %d", gen), d.stdout, prev, next)
		if r := a.commit(fmt.Sprint("edit ", gen)); r.generation != uint64(gen) {
			t.Fatalf("commit %d accepted as %d", gen, r.generation)
		}
		trees = append(trees, next)
	}
	// The corpus holds every case the test is about.
	seen := map[string]bool{}
	for gen := 1; gen <= gens; gen++ {
		for p, c := range trees[gen] {
			seen["crlf"] = seen["crlf"] || strings.Contains(c, "\r\n")
			seen["no final newline"] = seen["no final newline"] || (c != "" && !strings.HasSuffix(c, "\n"))
			seen["empty"] = seen["empty"] || c == ""
			seen["space in name"] = seen["space in name"] || strings.Contains(p, " ")
			if old, ok := trees[gen-1][p]; !ok {
				seen["add"] = true
			} else if old != c {
				seen["edit"] = true
			}
		}
		for p := range trees[gen-1] {
			if _, ok := trees[gen][p]; !ok {
				seen["delete"] = true
			}
		}
	}
	for _, k := range []string{"crlf", "no final newline", "empty", "space in name", "add", "edit", "delete"} {
		if !seen[k] {
			t.Errorf("the corpus has no %s", k)
		}
	}
	for gen := 1; gen <= gens; gen++ {
		o := a.run("show", fmt.Sprint(gen))
		if o.code != 0 {
			t.Fatalf("%s", o)
		}
		applyBoth(t, fmt.Sprintf("show %d", gen), patchOf(o.stdout), trees[gen-1], trees[gen])
	}
	// log -p: one entry per generation, newest first, each applying to
	// its parent.
	o := a.run("log", "-p", "-n", fmt.Sprint(gens))
	if o.code != 0 {
		t.Fatalf("%s", o)
	}
	starts := reEntryStart.FindAllStringIndex(o.stdout, -1)
	if len(starts) != gens {
		t.Fatalf("log -p printed %d entries, want %d", len(starts), gens)
	}
	for i, s := range starts {
		end := len(o.stdout)
		if i+1 < len(starts) {
			end = starts[i+1][0] - 1 // the blank line between entries
		}
		gen := gens - i
		applyBoth(t, fmt.Sprintf("log -p entry %d", gen), patchOf(o.stdout[s[0]:end]), trees[gen-1], trees[gen])
	}
	for _, pair := range [][2]int{{0, gens}, {3, 17}, {17, 3}, {gens - 1, gens}} {
		args := []string{"diff", fmt.Sprint(pair[0]), fmt.Sprint(pair[1])}
		if pair[1] == gens {
			args = args[:2] // one generation: against the accepted head
		}
		o := a.run(args...)
		if o.code != 0 {
			t.Fatalf("%s", o)
		}
		applyBoth(t, strings.Join(args, " "), o.stdout, trees[pair[0]], trees[pair[1]])
	}
}

var reEntryStart = regexp.MustCompile(`(?m)^generation \d+  `)
