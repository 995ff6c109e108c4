package bench

// Helpers of the CLI benchmarks: the slivingdoc binary built for the
// benchmark, notebooks of N files x 2 KB on the file store or SeaweedFS,
// timed whole-process runs, and the reference: `git status` on a copy of
// the same tree, measured in the same run.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/seaweed"
)

// cliBinary builds cmd/slivingdoc into a temporary directory of b.
func cliBinary(b *testing.B) string {
	b.Helper()
	out := filepath.Join(b.TempDir(), "slivingdoc")
	cmd := exec.Command("go", "build", "-o", out, "github.com/slivingdoc/slivingdoc/cmd/slivingdoc")
	if o, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, o)
	}
	return out
}

// cliStore is a store the benchmarks run against.
type cliStore struct {
	name string
	env  func(b *testing.B) (env []string, fileDir string) // fileDir: the file store's directory, "" for S3
}

var cliStores = []cliStore{
	{"file", func(b *testing.B) ([]string, string) {
		dir := filepath.Join(b.TempDir(), "store")
		return []string{"SLIVINGDOC_STORE=file://" + filepath.ToSlash(dir)}, dir
	}},
	{"seaweedfs", func(b *testing.B) ([]string, string) {
		srv := seaweed.Shared(b)
		return append(srv.Env(), "SLIVINGDOC_BUCKET="+srv.NewBucket(b), "SLIVINGDOC_PATH_STYLE=true",
			"AWS_CONFIG_FILE="+os.DevNull, "AWS_SHARED_CREDENTIALS_FILE="+os.DevNull), ""
	}},
}

// cliNotebook is one notebook directory with its own private root.
type cliNotebook struct {
	b       *testing.B
	bin     string
	dir     string
	env     []string
	fileDir string
}

func newCLINotebook(b *testing.B, bin string, st cliStore) *cliNotebook {
	base := b.TempDir()
	env, fileDir := st.env(b)
	var clean []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(k, "SLIVINGDOC_") && !strings.HasPrefix(k, "AWS_") && k != "LOG_LEVEL" {
			clean = append(clean, kv)
		}
	}
	env = append(append(clean, env...), "SLIVINGDOC_PRIVATE_ROOT="+filepath.Join(base, "private"), "LOG_LEVEL=warn", "NO_COLOR=1")
	return &cliNotebook{b: b, bin: bin, dir: filepath.Join(base, "notes"), env: env, fileDir: fileDir}
}

// run runs one slivingdoc process and returns its wall time.
func (n *cliNotebook) run(args ...string) time.Duration {
	n.b.Helper()
	cmd := exec.Command(n.bin, args...)
	cmd.Env = n.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if err != nil {
		n.b.Fatalf("slivingdoc %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return d
}

// fill writes files x size bytes under dir, 100 files per subdirectory.
func fill(b *testing.B, dir string, files, size int) []string {
	b.Helper()
	names := make([]string, files)
	for i := range files {
		names[i] = fmt.Sprintf("d%03d/note-%05d.md", i/100, i)
		p := filepath.Join(dir, filepath.FromSlash(names[i]))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, NoteText(i, size), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return names
}

// appendTo appends data to a file.
func appendTo(b *testing.B, path string, data []byte) {
	b.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

// gitReference is a git repository holding a copy of a tree.
type gitReference struct {
	b   *testing.B
	dir string
}

// newGitReference copies src into a fresh repository and commits it.
func newGitReference(b *testing.B, src string) *gitReference {
	b.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		b.Fatal("git is the reference of these benchmarks and is not installed")
	}
	g := &gitReference{b: b, dir: filepath.Join(b.TempDir(), "git")}
	if err := os.CopyFS(g.dir, os.DirFS(src)); err != nil {
		b.Fatal(err)
	}
	// Files modified in the same second as the index are "racily clean"
	// and git re-hashes them on every status; age them so git is measured
	// at its best, as in a repository the user has had for a while.
	old := time.Now().Add(-time.Minute)
	err := filepath.WalkDir(g.dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, old, old)
	})
	if err != nil {
		b.Fatal(err)
	}
	g.git("init", "-q")
	g.git("add", "-A")
	g.git("-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "commit", "-q", "-m", "tree")
	g.status() // warm the index, as a user's repository is
	return g
}

func (g *gitReference) git(args ...string) {
	g.b.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = g.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		g.b.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// status times one `git status --porcelain`.
func (g *gitReference) status() time.Duration {
	start := time.Now()
	g.git("status", "--porcelain")
	return time.Since(start)
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// report sets the benchmark's metrics: the median wall time of the timed
// runs, the median of the git status runs interleaved with them (so both
// see the same load on a shared machine), and their ratio.
func report(b *testing.B, runs, ref []time.Duration) {
	m, r := median(runs), median(ref)
	b.ReportMetric(float64(m.Microseconds())/1000, "ms/median")
	b.ReportMetric(float64(r.Microseconds())/1000, "ms/git-status")
	b.ReportMetric(float64(m)/float64(r), "x-git-status")
}
