package bench

// BenchmarkCLIHistoryCommands times `slivingdoc log -n 100 --stat` and
// `slivingdoc show GEN` (whole processes) on a notebook of 1,000 files x
// 2 KB with 10,000 publications, each appending a line to one file. The
// history is made in-process through the engine (10,000 CLI processes
// would take far longer and measure nothing more); the timed processes
// have their own private root, warmed by one untimed log (reported as
// ms/log-cold), as a person's machine that has read the notebook before.
//
// Reference, in the same run: git on a repository holding the same 10,000
// commits (made with git fast-import), `git log -n 100 --stat` and
// `git show` of the same commit, each run interleaved with ours.
//
// Target (DESIGN §10 and issue 21): each under 0.5 s on SeaweedFS.
//
//	go test -run '^$' -bench CLIHistoryCommands -benchtime 10x ./bench/
//	HISTORY_BENCH_PUBLICATIONS=2000 (default 10000) for a quicker run
//	HISTORY_BENCH_STORES=file (default file,seaweedfs)
//
// Metrics: ms/log, ms/show (medians), ms/git-log, ms/git-show, x-git-log,
// x-git-show, ms/log-cold.
//
// Measured 2026-12-01, 2 cores shared with other sessions (load ~10),
// 10x: SeaweedFS log 41.9 ms, show 15.5 ms (git 8.9 / 3.3 ms), cold log
// 409 ms; file store log 25.7 ms, show 10.5 ms (git 8.5 / 2.9 ms), cold
// log 384 ms. Seeding took about 5 minutes per store.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/filestore"
	"github.com/slivingdoc/slivingdoc/remote/s3store"
	"github.com/slivingdoc/slivingdoc/server"
)

const (
	historyBenchFiles = 1000
	historyBenchShow  = 50 // show the publication this far below the head
)

func BenchmarkCLIHistoryCommands(b *testing.B) {
	pubs := 10000
	if v := os.Getenv("HISTORY_BENCH_PUBLICATIONS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < historyBenchShow+2 {
			b.Fatalf("HISTORY_BENCH_PUBLICATIONS=%q", v)
		}
		pubs = n
	}
	stores := "file,seaweedfs"
	if v := os.Getenv("HISTORY_BENCH_STORES"); v != "" {
		stores = v
	}
	bin := cliBinary(b)
	for _, st := range cliStores {
		if !strings.Contains(","+stores+",", ","+st.name+",") {
			continue
		}
		b.Run("store="+st.name, func(b *testing.B) {
			nb := newCLINotebook(b, bin, st)
			b.StopTimer()
			start := time.Now()
			git := seedHistory(b, nb, pubs)
			b.Logf("%d publications seeded in %s", pubs, time.Since(start).Round(time.Second))
			gen := strconv.Itoa(pubs - historyBenchShow)
			cold := nb.run("log", "-n", "100", "--stat")
			var logs, shows, gitLogs, gitShows []time.Duration
			b.StartTimer()
			for b.Loop() {
				logs = append(logs, nb.run("log", "-n", "100", "--stat"))
				shows = append(shows, nb.run("show", gen))
				b.StopTimer()
				gitLogs = append(gitLogs, git.timed("log", "-n", "100", "--stat"))
				gitShows = append(gitShows, git.timed("show", fmt.Sprintf("HEAD~%d", historyBenchShow)))
				b.StartTimer()
			}
			b.StopTimer()
			ml, ms, gl, gs := median(logs), median(shows), median(gitLogs), median(gitShows)
			b.ReportMetric(float64(ml.Microseconds())/1000, "ms/log")
			b.ReportMetric(float64(ms.Microseconds())/1000, "ms/show")
			b.ReportMetric(float64(gl.Microseconds())/1000, "ms/git-log")
			b.ReportMetric(float64(gs.Microseconds())/1000, "ms/git-show")
			b.ReportMetric(float64(ml)/float64(gl), "x-git-log")
			b.ReportMetric(float64(ms)/float64(gs), "x-git-show")
			b.ReportMetric(float64(cold.Microseconds())/1000, "ms/log-cold")
		})
	}
}

// historyGit is the reference repository.
type historyGit struct {
	b   *testing.B
	dir string
}

func (g historyGit) timed(args ...string) time.Duration {
	g.b.Helper()
	cmd := exec.Command("git", append([]string{"--no-pager"}, args...)...)
	cmd.Dir = g.dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+g.dir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		g.b.Fatalf("git %v: %v\n%s", args, err, out.String())
	}
	return time.Since(start)
}

// seedHistory makes pubs publications in nb's store through the engine
// (its own directory and private root) and the same commits in a git
// repository, which it returns.
func seedHistory(b *testing.B, nb *cliNotebook, pubs int) historyGit {
	b.Helper()
	ctx := context.Background()
	store := benchStore(b, nb)
	ws := b.TempDir()
	dir := filepath.Join(ws, "notes")
	e, err := server.New(server.Config{Store: store, PrivateRoot: b.TempDir(), WorkspaceRoot: ws, DefaultDir: dir})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	if _, err := e.Pull(ctx, ""); err != nil {
		b.Fatal(err)
	}
	names := fill(b, dir, historyBenchFiles, 2048)
	var stream bytes.Buffer
	when := time.Now().Add(-time.Duration(pubs) * time.Second).Unix()
	gitCommit := func(i int, msg string, paths []string) {
		fmt.Fprintf(&stream, "commit refs/heads/main\ncommitter bench <bench@example.invalid> %d +0000\ndata %d\n%s\n", when+int64(i), len(msg), msg)
		for _, p := range paths {
			c, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
			if err != nil {
				b.Fatal(err)
			}
			fmt.Fprintf(&stream, "M 100644 inline %s\ndata %d\n%s\n", p, len(c), c)
		}
	}
	commit := func(msg string) {
		if _, err := e.Commit(ctx, "", msg); err != nil {
			b.Fatal(err)
		}
	}
	commit("tree")
	gitCommit(0, "tree", names)
	for i := 1; i < pubs; i++ {
		p := names[(i*7)%len(names)]
		appendTo(b, filepath.Join(dir, filepath.FromSlash(p)), fmt.Appendf(nil, "publication %d: a line of notes by an agent\n", i))
		msg := fmt.Sprintf("append %d", i)
		commit(msg)
		gitCommit(i, msg, []string{p})
	}
	g := historyGit{b: b, dir: filepath.Join(b.TempDir(), "git")}
	for _, args := range [][]string{{"init", "-q", "-b", "main", g.dir}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir = g.dir
	cmd.Stdin = &stream
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git fast-import: %v\n%s", err, out)
	}
	g.timed("log", "-n", "100", "--stat") // warm, as ours is
	return g
}

// benchStore opens, in this process, the store nb's processes use.
func benchStore(b *testing.B, nb *cliNotebook) remote.Store {
	b.Helper()
	if nb.fileDir != "" {
		s, err := filestore.New(nb.fileDir)
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	env := map[string]string{}
	for _, kv := range nb.env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	s, err := s3store.New(context.Background(), s3store.Config{
		Bucket: env["SLIVINGDOC_BUCKET"], Prefix: "slivingdoc", Region: env["AWS_REGION"], Endpoint: env["AWS_ENDPOINT_URL_S3"],
		PathStyle: true, AccessKeyID: env["AWS_ACCESS_KEY_ID"], SecretAccessKey: env["AWS_SECRET_ACCESS_KEY"],
	})
	if err != nil {
		b.Fatal(err)
	}
	return s
}
