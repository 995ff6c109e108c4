package main

// Helpers of the black-box suite: a notebook (one store, fresh per test),
// agents (each its own notebook directory and private root, as on separate
// machines), runs of the binary, and parsers for its result and report.

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// backend makes a fresh, empty store and returns the environment that
// selects it.
type backend struct {
	name     string
	storeEnv func(t *testing.T) []string
}

// backends are the stores every black-box test runs on; the SeaweedFS one
// registers itself from cli_seaweed_test.go.
var backends = []backend{{"file", fileStoreEnv}}

func fileStoreEnv(t *testing.T) []string {
	return []string{"SLIVINGDOC_STORE=file://" + filepath.ToSlash(filepath.Join(t.TempDir(), "store"))}
}

// forEachBackend runs f once per backend on a fresh notebook.
func forEachBackend(t *testing.T, f func(t *testing.T, nb *notebook)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f(t, newNotebook(t, b))
		})
	}
}

// notebook is one store shared by the agents of a test.
type notebook struct {
	t       *testing.T
	bin     string
	env     []string
	backend string
}

func newNotebook(t *testing.T, b backend) *notebook {
	return &notebook{t: t, bin: cliBinary(t), env: b.storeEnv(t), backend: b.name}
}

// agent is one user of the notebook: a notebook directory and a private
// root of its own.
type agent struct {
	nb   *notebook
	name string
	dir  string // the notebook directory (L)
	priv string // the private root (P)
	env  []string
	bin  string
}

func (nb *notebook) agent(name string) *agent {
	base := nb.t.TempDir()
	a := &agent{nb: nb, name: name, dir: filepath.Join(base, "notes"), priv: filepath.Join(base, "private"), bin: nb.bin}
	a.env = append(cleanEnv(), nb.env...)
	// Per-user directories in the test's own space, so a test that forgets
	// a store setting never touches the real user data or cache dirs.
	a.env = append(a.env, "SLIVINGDOC_PRIVATE_ROOT="+a.priv, "XDG_DATA_HOME="+filepath.Join(base, "xdg-data"), "XDG_CACHE_HOME="+filepath.Join(base, "xdg-cache"))
	return a
}

// cleanEnv is the test process's environment without anything that would
// configure slivingdoc, colour or the AWS chain from outside the test.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "SLIVINGDOC_") || strings.HasPrefix(k, "AWS_") || k == "LOG_LEVEL" || k == "NO_COLOR" {
			continue
		}
		out = append(out, kv)
	}
	// Tests never reach the instance metadata endpoint: it is not on
	// loopback, and the SDK's default chain would try it without credentials.
	return append(out, "AWS_EC2_METADATA_DISABLED=true")
}

// outcome is one finished process.
type outcome struct {
	args           []string
	code           int
	signal         syscall.Signal // non-zero when killed by a signal
	stdout, stderr string
}

func (o outcome) String() string {
	return "slivingdoc " + strings.Join(o.args, " ") + " -> exit " + strconv.Itoa(o.code) +
		"\n--- stdout\n" + o.stdout + "--- stderr\n" + o.stderr
}

// run runs the binary in the agent's notebook directory's parent with extra
// environment entries.
func (a *agent) runEnv(extra []string, args ...string) outcome {
	a.nb.t.Helper()
	return a.exec(extra, "", args...)
}

// runStdin runs the binary with stdin as its standard input.
func (a *agent) runStdin(stdin string, args ...string) outcome {
	a.nb.t.Helper()
	return a.exec(nil, stdin, args...)
}

func (a *agent) exec(extra []string, stdin string, args ...string) outcome {
	a.nb.t.Helper()
	return a.execIn(filepath.Dir(a.dir), append(append([]string{}, a.env...), extra...), stdin, args...)
}

// execIn runs the binary in directory dir with exactly the environment env.
func (a *agent) execIn(dir string, env []string, stdin string, args ...string) outcome {
	a.nb.t.Helper()
	cmd := exec.Command(a.bin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env, cmd.Dir = env, dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	o := outcome{args: args, stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		o.code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			o.signal = ws.Signal()
		}
	default:
		a.nb.t.Fatalf("running %v: %v", args, err)
	}
	return o
}

func (a *agent) run(args ...string) outcome { a.nb.t.Helper(); return a.runEnv(nil, args...) }

// syncArgs are the arguments of a's pull (op "pull") or of a commit
// (op "commit", message "a"): the two operations that rewrite L.
func (a *agent) syncArgs(op string) []string {
	if op == "commit" {
		return []string{"commit", a.dir, "-m", "a"}
	}
	return []string{"pull", a.dir}
}

// pull and commit must succeed; they return the parsed result.
func (a *agent) pull() okResult {
	a.nb.t.Helper()
	return mustOK(a.nb.t, a.run("pull", a.dir))
}

func (a *agent) commit(msg string) okResult {
	a.nb.t.Helper()
	return mustOK(a.nb.t, a.run("commit", a.dir, "-m", msg))
}

func (a *agent) write(rel, content string) {
	a.nb.t.Helper()
	p := filepath.Join(a.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		a.nb.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		a.nb.t.Fatal(err)
	}
}

func (a *agent) read(rel string) string {
	a.nb.t.Helper()
	b, err := os.ReadFile(filepath.Join(a.dir, filepath.FromSlash(rel)))
	if err != nil {
		a.nb.t.Fatal(err)
	}
	return string(b)
}

// files returns every regular file under the agent's directory.
func (a *agent) files() map[string]string {
	a.nb.t.Helper()
	return readTree(a.nb.t, a.dir)
}

func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if fi.Mode().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[filepath.ToSlash(rel)] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// okResult is a parsed success:
//
//	OK  generation N
//	path  +I -D
//	F files changed, I insertions(+), D deletions(-)
type okResult struct {
	generation uint64
	files      map[string][2]int
	order      []string
	totals     [3]int
	broughtIn  map[string][2]int // a commit's "brought in from others" section (nil: none)
}

var (
	reOK     = regexp.MustCompile(`^OK  generation (\d+)$`)
	reFile   = regexp.MustCompile(`^(.+)  \+(\d+) -(\d+)$`)
	reTotals = regexp.MustCompile(`^(\d+) files? changed, (\d+) insertions?\(\+\), (\d+) deletions?\(-\)$`)
)

func mustOK(t *testing.T, o outcome) okResult {
	t.Helper()
	if o.code != 0 {
		t.Fatalf("want success:\n%s", o)
	}
	r, ok := parseOK(o.stdout)
	if !ok {
		t.Fatalf("malformed result:\n%s", o)
	}
	return r
}

func parseOK(s string) (okResult, bool) {
	// A commit may end with a section of what it brought in from others.
	s, brought, hasBrought := strings.Cut(s, "\nbrought in from others:\n")
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	if len(lines) < 2 {
		return okResult{}, false
	}
	m := reOK.FindStringSubmatch(lines[0])
	if m == nil {
		return okResult{}, false
	}
	r := okResult{files: map[string][2]int{}}
	r.generation, _ = strconv.ParseUint(m[1], 10, 64)
	var ok bool
	if r.order, r.totals, ok = parseStats(lines[1:], r.files); !ok {
		return okResult{}, false
	}
	if hasBrought {
		r.broughtIn = map[string][2]int{}
		if _, _, ok := parseStats(strings.Split(strings.TrimSuffix(brought, "\n"), "\n"), r.broughtIn); !ok {
			return okResult{}, false
		}
	}
	return r, true
}

// parseStats parses file lines and the totals trailer into files.
func parseStats(lines []string, files map[string][2]int) (order []string, totals [3]int, ok bool) {
	if len(lines) == 0 {
		return nil, totals, false
	}
	for _, l := range lines[:len(lines)-1] {
		f := reFile.FindStringSubmatch(l)
		if f == nil {
			return nil, totals, false
		}
		i, _ := strconv.Atoi(f[2])
		d, _ := strconv.Atoi(f[3])
		files[f[1]] = [2]int{i, d}
		order = append(order, f[1])
	}
	tm := reTotals.FindStringSubmatch(lines[len(lines)-1])
	if tm == nil {
		return nil, totals, false
	}
	for i := range 3 {
		totals[i], _ = strconv.Atoi(tm[i+1])
	}
	return order, totals, true
}

// report is a parsed candid error report.
type report struct {
	code, reason, action string
	retryable            bool
	diagnosticID         string
	files                []fileReport
}

type fileReport struct {
	path, reason string
	ranges       string // "12-18, 30-31" or ""
}

func mustFail(t *testing.T, o outcome) report {
	t.Helper()
	if o.code != 1 {
		t.Fatalf("want exit 1 with a report:\n%s", o)
	}
	r, ok := parseReport(o.stdout)
	if !ok {
		t.Fatalf("malformed report:\n%s", o)
	}
	return r
}

var reHead = regexp.MustCompile(`^([A-Z_]+) · ([A-Z_]+)$`)

func parseReport(s string) (report, bool) {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	if len(lines) < 5 {
		return report{}, false
	}
	h := reHead.FindStringSubmatch(lines[0])
	if h == nil {
		return report{}, false
	}
	r := report{code: h[1], reason: h[2]}
	seen := 0
	for _, l := range lines[2:] {
		switch {
		case strings.HasPrefix(l, "file: "):
			parts := strings.Split(strings.TrimPrefix(l, "file: "), " · ")
			fr := fileReport{path: parts[0]}
			if len(parts) > 1 {
				fr.reason = parts[1]
			}
			if len(parts) > 2 {
				fr.ranges = strings.TrimPrefix(parts[2], "lines ")
			}
			r.files = append(r.files, fr)
		case strings.HasPrefix(l, "action: "):
			r.action = strings.TrimPrefix(l, "action: ")
			seen++
		case strings.HasPrefix(l, "retryable: "):
			r.retryable = l == "retryable: true"
			seen++
		case strings.HasPrefix(l, "diagnosticId: "):
			r.diagnosticID = strings.TrimPrefix(l, "diagnosticId: ")
			seen++
		}
	}
	return r, seen == 3
}

// file returns the report's entry for path.
func (r report) file(path string) (fileReport, bool) {
	for _, f := range r.files {
		if f.path == path {
			return f, true
		}
	}
	return fileReport{}, false
}

// generation is the accepted generation as a fresh agent sees it.
func (nb *notebook) generation() uint64 {
	nb.t.Helper()
	return nb.agent("observer").pull().generation
}

const devNull = os.DevNull

func (a *agent) remove(rel string) {
	a.nb.t.Helper()
	if err := os.Remove(filepath.Join(a.dir, filepath.FromSlash(rel))); err != nil {
		a.nb.t.Fatal(err)
	}
}
