package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/server"
)

// runIn runs the CLI in this process with its streams in buffers. Only
// for help, usage errors and other paths that touch nothing.
func runIn(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(context.Background(), args, stdio{in: strings.NewReader(""), out: &out, err: &errb})
	return code, out.String(), errb.String()
}

// One rule for every command and for bare slivingdoc: help asked for goes
// to stdout with exit 0, a usage error to stderr with exit 2; `help CMD`
// prints exactly `CMD -h`.
func TestCLIHelpAndUsageErrorsFollowOneRule(t *testing.T) {
	for _, name := range commandNames() {
		code, out, errOut := runIn(name, "-h")
		if code != 0 || out == "" || errOut != "" {
			t.Errorf("%s -h: exit %d, stdout %d bytes, stderr %q; want exit 0, the page on stdout only", name, code, len(out), errOut)
		}
		if code2, out2, _ := runIn("help", name); code2 != code || out2 != out {
			t.Errorf("help %s differs from %s -h (exit %d vs %d):\n%s\n---\n%s", name, name, code2, code, out2, out)
		}
		if code, out, errOut := runIn(name, "--no-such-flag"); code != 2 || out != "" || errOut == "" {
			t.Errorf("%s --no-such-flag: exit %d, stdout %q, stderr %q; want exit 2, a message on stderr only", name, code, out, errOut)
		}
	}
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}} {
		if code, out, errOut := runIn(args...); code != 0 || !strings.Contains(out, "Commands:") || errOut != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	for _, args := range [][]string{{}, {"no-such-command"}, {"help", "no-such-topic"}, {"version", "extra"}, {"completion"}, {"completion", "tcsh"}} {
		if code, out, errOut := runIn(args...); code != 2 || out != "" || errOut == "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2, a message on stderr only", args, code, out, errOut)
		}
	}
	_, v, _ := runIn("version")
	if code, out, _ := runIn("--version"); code != 0 || out != v || !strings.HasPrefix(v, "slivingdoc ") {
		t.Errorf("--version: exit %d, %q; version printed %q", code, out, v)
	}
}

// A command's page lists its own flags and names the shared ones, which
// `help store` explains with their variables and defaults; the page stays
// short.
func TestCLIHelpPagesPointToTheStorePage(t *testing.T) {
	_, store, _ := runIn("help", "store")
	for _, st := range allSettings {
		if !strings.Contains(store, "--"+st.flag) || !strings.Contains(store, st.env) {
			t.Errorf("help store lacks --%s / %s", st.flag, st.env)
		}
	}
	for _, name := range []string{"pull", "commit", "status", "log", "serve", "verify", "show", "diff", "restore", "revert"} {
		_, page, _ := runIn(name, "-h")
		if !strings.Contains(page, "slivingdoc help store") {
			t.Errorf("%s -h does not point to 'slivingdoc help store'", name)
		}
		if strings.Contains(page, setStore.env) {
			t.Errorf("%s -h repeats the store settings' reference (%s)", name, setStore.env)
		}
		if n := strings.Count(page, "\n"); n > 45 {
			t.Errorf("%s -h is %d lines", name, n)
		}
	}
	if _, page, _ := runIn("commit", "-h"); !strings.Contains(page, "-m string") || !strings.Contains(page, "-stat") || !strings.Contains(page, "-quiet") {
		t.Errorf("commit -h lacks its own flags:\n%s", page)
	}
}

// git's short forms of a count: log -n1 and log -1 are log -n 1; a value
// of another flag and anything after -- are left alone.
func TestShortCountForms(t *testing.T) {
	c := newCLICommand("log", "log", "", stdio{out: &bytes.Buffer{}, err: &bytes.Buffer{}})
	c.fs.Int("n", 10, "")
	c.fs.Bool("p", false, "")
	for _, tc := range []struct{ in, want []string }{
		{[]string{"-n1"}, []string{"-n", "1"}},
		{[]string{"-1"}, []string{"-n", "1"}},
		{[]string{"-p", "-20"}, []string{"-p", "-n", "20"}},
		{[]string{"-n", "5"}, []string{"-n", "5"}},
		{[]string{"--commit-retries", "-1"}, []string{"--commit-retries", "-1"}},
		{[]string{"--", "-1"}, []string{"--", "-1"}},
		{[]string{"-nx"}, []string{"-nx"}},
	} {
		if got := shortCounts(c.fs, tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("shortCounts(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if _, code, done := c.parse([]string{"-3"}, 0); done {
		t.Fatalf("log -3 refused (exit %d)", code)
	}
	if got := c.fs.Lookup("n").Value.String(); got != "3" {
		t.Fatalf("log -3 set -n to %s", got)
	}
}

// On a terminal a long result is summarised (its first files, then "and N
// more"); --stat lists all, --quiet none; the result itself is untouched.
func TestLongResultIsSummarisedOnlyInTheView(t *testing.T) {
	r := &server.Result{Generation: 7}
	for i := range 25 {
		r.Files = append(r.Files, server.FileStat{Path: "notes/f" + string(rune('a'+i)) + ".md", Insertions: 1})
	}
	lines := func(v resultView) []string {
		var b bytes.Buffer
		printResultAs(&b, r, v)
		return strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	}
	full := lines(viewFull)
	if len(full) != 27 || full[0] != "OK  generation 7" || full[26] != "25 files changed, 25 insertions(+), 0 deletions(-)" {
		t.Fatalf("full view:\n%s", strings.Join(full, "\n"))
	}
	sum := lines(viewSummary)
	want := append(append([]string{}, full[:11]...), "... and 15 more files (--stat lists them all)", full[26])
	if !slices.Equal(sum, want) {
		t.Fatalf("summary:\n%s\nwant:\n%s", strings.Join(sum, "\n"), strings.Join(want, "\n"))
	}
	if q := lines(viewQuiet); !slices.Equal(q, []string{full[0], full[26]}) {
		t.Fatalf("quiet:\n%s", strings.Join(q, "\n"))
	}
	if len(r.Files) != 25 {
		t.Fatal("the view shortened the result")
	}
	r.Files = r.Files[:20] // at the limit nothing is summarised
	if s := lines(viewSummary); len(s) != 22 {
		t.Fatalf("a result of 20 files was summarised:\n%s", strings.Join(s, "\n"))
	}
	// Not a terminal (a buffer): the default is every file.
	var out bytes.Buffer
	yes, no := true, false
	if v, err := (resultFlags{stat: &no, quiet: &no}).view(&out); err != nil || v != viewFull {
		t.Fatalf("default view into a buffer = %v, %v", v, err)
	}
	if _, err := (resultFlags{stat: &yes, quiet: &yes}).view(&out); err == nil {
		t.Fatal("--stat with --quiet accepted")
	}
	if code, out, errOut := runIn("pull", t.TempDir(), "--stat", "--quiet"); code != 2 || out != "" || errOut == "" {
		t.Fatalf("pull --stat --quiet: exit %d, %q, %q", code, out, errOut)
	}
}

// The completion scripts offer every command and each command's flags;
// bash's really completes them.
func TestCompletionScripts(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		code, script, errOut := runIn("completion", shell)
		if code != 0 || errOut != "" {
			t.Fatalf("completion %s: exit %d, %s", shell, code, errOut)
		}
		for _, c := range completionCommands() {
			if !strings.Contains(script, c.name) {
				t.Errorf("%s script lacks the command %s", shell, c.name)
			}
			for _, f := range c.flags {
				want := dashed(f)
				if shell == "fish" {
					want = "-l " + f
					if len(f) == 1 {
						want = "-s " + f
					}
				}
				if !strings.Contains(script, want) {
					t.Errorf("%s script lacks %s of %s", shell, want, c.name)
				}
			}
		}
	}
	if !slices.Contains(commandFlags("commit"), "m") || !slices.Contains(commandFlags("log"), "n") || !slices.Contains(commandFlags("log"), "store") {
		t.Fatalf("flags read from the pages: commit %v, log %v", commandFlags("commit"), commandFlags("log"))
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to run the bash script")
	}
	_, script, _ := runIn("completion", "bash")
	f := filepath.Join(t.TempDir(), "c.bash")
	if err := os.WriteFile(f, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	complete := func(words ...string) string {
		t.Helper()
		prog := `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($#-1)); _slivingdoc; printf '%s\n' "${COMPREPLY[@]}"`
		out, err := exec.Command(bash, append([]string{"-c", prog, "bash", f}, words...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("bash: %v\n%s", err, out)
		}
		return string(out)
	}
	if got := complete("slivingdoc", "com"); got != "commit\ncompletion\n" {
		t.Errorf("slivingdoc com<TAB> = %q", got)
	}
	if got := complete("slivingdoc", "log", "--si"); got != "--since\n" {
		t.Errorf("slivingdoc log --si<TAB> = %q", got)
	}
	if got := complete("slivingdoc", "help", "sto"); got != "store\n" {
		t.Errorf("slivingdoc help sto<TAB> = %q", got)
	}
}

// docs/cli.md documents the real flags: each command's own flags in its
// section (or its row of the command table), every shared flag in the
// Settings table, and no --flag that no command has.
func TestCLIDocMatchesTheFlags(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	sections := map[string]string{} // heading -> its text, up to the next heading
	var heading string
	inFence := false
	for line := range strings.Lines(doc) {
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
		}
		if !inFence && strings.HasPrefix(line, "#") {
			heading = strings.TrimSpace(strings.TrimLeft(line, "#"))
			continue
		}
		sections[heading] += line
	}
	rows := map[string]string{} // command -> its row of the command table
	for line := range strings.Lines(doc) {
		if m := regexp.MustCompile("^\\| `([a-z-]+)").FindStringSubmatch(line); m != nil {
			rows[m[1]] += line
		}
	}
	mentions := func(text, flag string) bool {
		return regexp.MustCompile("[` [|]--?" + regexp.QuoteMeta(flag) + "[ `=\\]]").MatchString(text)
	}
	shared := map[string]bool{}
	for _, st := range allSettings {
		shared[st.flag] = true
		if !regexp.MustCompile("(?m)^\\| `--" + regexp.QuoteMeta(st.flag) + "[ `]").MatchString(sections["Settings"]) {
			t.Errorf("docs/cli.md: the Settings table has no row for --%s", st.flag)
		}
	}
	// --help and --version are bare slivingdoc's; "Flags are written
	// `--name` or `-name`" names none. The retired settings are accepted
	// by every command that takes the shared ones, and the doc says so.
	known := map[string]bool{"help": true, "version": true, "name": true}
	for _, st := range retiredSettings {
		known[st.flag] = true
		if !mentions(sections["Settings"], st.flag) {
			t.Errorf("docs/cli.md: the Settings section does not say --%s is retired", st.flag)
		}
	}
	for _, name := range commandNames() {
		for _, f := range commandFlags(name) {
			known[f] = true
			if shared[f] {
				continue
			}
			if text := sections[name] + rows[name]; !mentions(text, f) {
				t.Errorf("docs/cli.md does not document %s's flag -%s in its section or table row", name, f)
			}
		}
	}
	for _, m := range regexp.MustCompile("`--([a-z][a-z0-9-]*)").FindAllStringSubmatch(doc, -1) {
		if !known[m[1]] {
			t.Errorf("docs/cli.md documents --%s, which no command has", m[1])
		}
	}
}

// `show -1` is the latest publication with its changes, as in git;
// `show -n 2` the two latest.
func TestCLIShowShortCount(t *testing.T) {
	nb := newNotebook(t, backends[0])
	a := nb.agent("a")
	a.pull()
	a.write("n.md", "one\n")
	a.commit("first")
	a.write("n.md", "one\ntwo\n")
	a.commit("second")
	o := a.run("show", "-1")
	if o.code != 0 || !strings.HasPrefix(o.stdout, "generation 2 ") || !strings.Contains(o.stdout, "+two\n") || strings.Contains(o.stdout, "generation 1 ") {
		t.Fatalf("show -1:\n%s", o)
	}
	o = a.run("show", "-n", "2")
	if o.code != 0 || !strings.Contains(o.stdout, "generation 2 ") || !strings.Contains(o.stdout, "generation 1 ") {
		t.Fatalf("show -n 2:\n%s", o)
	}
	if o := a.run("show", "-1", "2"); o.code != 2 {
		t.Fatalf("show -1 with a GEN: %v", o)
	}
}

// A commit that merged others' changes lists them after its result, in a
// section of its own; the result itself stays what the commit published.
func TestCLICommitListsWhatItBroughtIn(t *testing.T) {
	nb := newNotebook(t, backends[0])
	a, b := nb.agent("a"), nb.agent("b")
	a.pull()
	a.write("mine.md", "m\n")
	a.commit("one")
	b.pull()
	for _, name := range []string{"x.md", "y.md"} {
		b.write(name, "from b\n")
	}
	b.commit("b's files")
	a.write("mine.md", "m\nmore\n")
	r := a.commit("two")
	if len(r.files) != 1 || r.files["mine.md"] != [2]int{1, 0} {
		t.Fatalf("the result lists %v, want what the commit published", r.files)
	}
	if len(r.broughtIn) != 2 || r.broughtIn["x.md"] != [2]int{1, 0} || r.broughtIn["y.md"] != [2]int{1, 0} {
		t.Fatalf("brought in %v, want b's two files", r.broughtIn)
	}
	a.write("mine.md", "m\nmore\nagain\n")
	if r := a.commit("three"); r.broughtIn != nil {
		t.Fatalf("a commit with nothing from others lists %v", r.broughtIn)
	}
}
