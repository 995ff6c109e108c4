package main

// Per-call latency of a long-lived `slivingdoc serve`, driven over stdio
// as a host drives it (file store and SeaweedFS), and of the CLI, each
// alternated call by call with `git status` on a tree of the same shape
// (DESIGN §10), so the load of a shared machine hits both alike:
//
//	go test -run '^$' -bench BenchmarkServe -benchtime 100x ./cmd/slivingdoc
//
// commit-1KiB appends 1 KiB to one file and commits; noop-commit and
// noop-pull change nothing; cli-* run one CLI process per call. Each
// reports the median of the operation (op-ms), of git status in the same
// iterations (git-ms) and their ratio (x-git), and both means
// (op-mean-ms, git-mean-ms); SLIVINGDOC_BENCH_FILES
// (for example "10000") and SLIVINGDOC_BENCH_STORES ("file") narrow the
// run; SLIVINGDOC_BENCH_BIN runs another build (before/after), and
// SLIVINGDOC_BENCH_VS=<build> alternates each serve call with the same call
// to that build's serve on an identical notebook instead of git status
// (vs-ms, x-vs): the steadiest before/after on a loaded machine.
//
// Between calls the benchmark waits as an agent thinks between its calls
// (SLIVINGDOC_BENCH_THINK, a duration, default 20ms; 0 for none): the
// work a serve process leaves after its reply (the object cache's copy of
// the pack, the rollups) then runs in that pause, as it does for a real
// host, and not inside the next measurement, where it would slow the
// reference (the floor, git status, the other build) and flatter the
// ratio.

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/seaweed"
)

// benchServe is one serve process and its raw stdio.
type benchServe struct {
	b   *testing.B
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
	id  int
}

func startBenchServe(b *testing.B, bin string, env []string, dir string) *benchServe {
	cmd := exec.Command(bin, "serve", "--workspace-root", dir)
	cmd.Env = env
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	s := &benchServe{b: b, cmd: cmd, in: in, out: bufio.NewScanner(out)}
	s.out.Buffer(make([]byte, 1<<20), 1<<26)
	s.call("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}`)
	fmt.Fprintln(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	b.Cleanup(func() { in.Close(); cmd.Wait() })
	return s
}

func (s *benchServe) call(method, params string) string {
	s.id++
	fmt.Fprintf(s.in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", s.id, method, params)
	want := fmt.Sprintf(`"id":%d,`, s.id)
	for s.out.Scan() {
		if line := s.out.Text(); strings.Contains(line, want) {
			if strings.Contains(line, `"isError":true`) || strings.Contains(line, `"error":{`) {
				s.b.Fatalf("%s failed: %.400s", method, line)
			}
			return line
		}
	}
	s.b.Fatalf("%s: server closed stdout", method)
	return ""
}

func (s *benchServe) tool(name, args string) {
	s.call("tools/call", fmt.Sprintf(`{"name":%q,"arguments":%s}`, name, args))
}

// seedTree writes n small files in dir (a few directories deep, like a
// notebook) and returns one of them.
func seedTree(b *testing.B, dir string, n int) string {
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("d%02d", i%50), fmt.Sprintf("e%02d", (i/50)%20), fmt.Sprintf("note-%05d.md", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(fmt.Sprintf("# note %d\n\nsome text of note %d\n", i, i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return filepath.Join(dir, "d00", "e00", "note-00000.md")
}

// benchStores select the store of a benchmark notebook.
var benchStores = []struct {
	name string
	env  func(b *testing.B, base string) []string
}{
	{"file", func(b *testing.B, base string) []string {
		return []string{"SLIVINGDOC_STORE=file://" + filepath.ToSlash(filepath.Join(base, "store"))}
	}},
	{"seaweedfs", func(b *testing.B, base string) []string {
		srv := seaweed.Shared(b)
		return append(srv.Env(), "SLIVINGDOC_BUCKET="+srv.NewBucket(b), "SLIVINGDOC_PATH_STYLE=true",
			"AWS_CONFIG_FILE="+devNull, "AWS_SHARED_CREDENTIALS_FILE="+devNull)
	}},
}

func BenchmarkServe(b *testing.B) {
	bin := os.Getenv("SLIVINGDOC_BENCH_BIN") // another build to compare (before/after)
	if bin == "" {
		bin = cliBinary(b)
	}
	sizes := []int{1000, 10000}
	if v := os.Getenv("SLIVINGDOC_BENCH_FILES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			b.Fatal(err)
		}
		sizes = []int{n}
	}
	vs := os.Getenv("SLIVINGDOC_BENCH_VS")
	for _, n := range sizes {
		var git func()
		if vs == "" {
			git = gitReference(b, n)
		}
		for _, st := range benchStores {
			if only := os.Getenv("SLIVINGDOC_BENCH_STORES"); only != "" && !strings.Contains(only, st.name) {
				continue
			}
			if vs != "" {
				benchServeVersus(b, bin, vs, st.name, st.env, n)
				continue
			}
			benchServeStore(b, bin, st.name, st.env, n, git)
		}
	}
}

// benchServeVersus alternates each serve call of bin with the same call to
// vs's serve, each on its own notebook of n files.
func benchServeVersus(b *testing.B, bin, vs, store string, storeEnv func(*testing.B, string) []string, n int) {
	one, other := newServeNotebook(b, bin, storeEnv, n), newServeNotebook(b, vs, storeEnv, n)
	for _, c := range []struct {
		name string
		call func(*serveNotebook, *testing.B)
	}{
		{"commit-1KiB", func(nb *serveNotebook, b *testing.B) {
			nb.appendKiB(b)
			nb.s.tool("notes_commit", `{"message":"append"}`)
		}},
		{"noop-commit", func(nb *serveNotebook, b *testing.B) { nb.s.tool("notes_commit", `{"message":"nothing"}`) }},
		{"noop-pull", func(nb *serveNotebook, b *testing.B) { nb.s.tool("notes_pull", `{}`) }},
	} {
		b.Run(fmt.Sprintf("files=%d/%s/%s", n, store, c.name), func(b *testing.B) {
			one.s.b, other.s.b = b, b
			alternateWith(b, "vs", func() { c.call(other, b) }, func() { c.call(one, b) })
		})
	}
}

// serveNotebook is a serve process on a seeded notebook of its own.
type serveNotebook struct {
	s       *benchServe
	target  string
	env     []string // the serve's environment, for CLI calls on the same notebook
	dir     string
	private string // the serve's private root
}

func newServeNotebook(b *testing.B, bin string, storeEnv func(*testing.B, string) []string, n int) *serveNotebook {
	base := b.TempDir()
	dir := filepath.Join(base, "notes")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	env := append(append(cleanEnv(), storeEnv(b, base)...),
		"SLIVINGDOC_PRIVATE_ROOT="+filepath.Join(base, "private"),
		"XDG_DATA_HOME="+filepath.Join(base, "xdg-data"), "XDG_CACHE_HOME="+filepath.Join(base, "xdg-cache"))
	s := startBenchServe(b, bin, env, dir)
	s.tool("notes_pull", `{}`)
	target := seedTree(b, dir, n)
	s.tool("notes_commit", `{"message":"seed"}`)
	return &serveNotebook{s: s, target: target, env: env, dir: dir, private: filepath.Join(base, "private")}
}

func (nb *serveNotebook) appendKiB(b *testing.B) {
	f, err := os.OpenFile(nb.target, os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	f.WriteString(strings.Repeat("0123456789abcde\n", 64))
	f.Close()
}

// gitReference returns a function running git status on a committed tree
// of n files shaped like the benchmark's notebooks (nil without git).
func gitReference(b *testing.B, n int) func() {
	if _, err := exec.LookPath("git"); err != nil {
		return nil
	}
	g := filepath.Join(b.TempDir(), "git")
	seedTree(b, g, n)
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "seed"}} {
		if out, err := exec.Command("git", append([]string{"-C", g}, args...)...).CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return func() {
		if err := exec.Command("git", "-C", g, "status", "--porcelain").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// alternate runs op and the reference in turn each iteration and reports
// both medians and their ratio.
func alternate(b *testing.B, ref func(), op func()) { alternateWith(b, "git", ref, op) }

// alternateWith is alternate with the reference named refName.
func alternateWith(b *testing.B, refName string, ref func(), op func()) {
	think := thinkTime(b)
	var ops, refs []time.Duration
	for b.Loop() {
		t := time.Now()
		op()
		ops = append(ops, time.Since(t))
		if ref != nil {
			time.Sleep(think)
			t = time.Now()
			ref()
			refs = append(refs, time.Since(t))
		}
		time.Sleep(think)
	}
	median := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2]) / 1e6
	}
	mean := func(d []time.Duration) float64 {
		var sum time.Duration
		for _, x := range d {
			sum += x
		}
		return float64(sum) / float64(len(d)) / 1e6
	}
	b.ReportMetric(median(ops), "op-ms")
	b.ReportMetric(mean(ops), "op-mean-ms")
	if len(refs) > 0 {
		g := median(refs)
		b.ReportMetric(g, refName+"-ms")
		b.ReportMetric(mean(refs), refName+"-mean-ms")
		b.ReportMetric(median(ops)/g, "x-"+refName)
	}
}

// thinkTime is the pause between two measured calls (the package doc).
func thinkTime(b *testing.B) time.Duration {
	v := os.Getenv("SLIVINGDOC_BENCH_THINK")
	if v == "" {
		return 20 * time.Millisecond
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		b.Fatalf("SLIVINGDOC_BENCH_THINK=%q: want a duration such as 20ms", v)
	}
	return d
}

func benchServeStore(b *testing.B, bin, store string, storeEnv func(*testing.B, string) []string, n int, git func()) {
	nb := newServeNotebook(b, bin, storeEnv, n)
	s, env, dir, appendKiB := nb.s, nb.env, nb.dir, nb.appendKiB

	b.Run(fmt.Sprintf("files=%d/%s/commit-1KiB", n, store), func(b *testing.B) {
		s.b = b
		// Against the writes DESIGN §6 requires of any commit on this
		// machine and store (serve_floor_test.go), not git status.
		alternateWith(b, "floor", commitFloor(b, nb), func() {
			appendKiB(b)
			s.tool("notes_commit", `{"message":"append"}`)
		})
	})
	b.Run(fmt.Sprintf("files=%d/%s/noop-commit", n, store), func(b *testing.B) {
		s.b = b
		alternate(b, git, func() { s.tool("notes_commit", `{"message":"nothing"}`) })
	})
	b.Run(fmt.Sprintf("files=%d/%s/noop-pull", n, store), func(b *testing.B) {
		s.b = b
		alternate(b, git, func() { s.tool("notes_pull", `{}`) })
	})
	cli := func(b *testing.B, args ...string) {
		cmd := exec.Command(bin, args...)
		cmd.Env, cmd.Dir = env, dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("slivingdoc %v: %v\n%s", args, err, out)
		}
	}
	b.Run(fmt.Sprintf("files=%d/%s/cli-commit-1KiB", n, store), func(b *testing.B) {
		alternate(b, git, func() {
			appendKiB(b)
			cli(b, "commit", "-m", "append")
		})
	})
	b.Run(fmt.Sprintf("files=%d/%s/cli-noop-commit", n, store), func(b *testing.B) {
		alternate(b, git, func() { cli(b, "commit", "-m", "nothing") })
	})
}
