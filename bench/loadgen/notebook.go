package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/slivingdoc/slivingdoc/bench"
)

// notebook is one visible directory and its private root, on one
// location of a store: what one agent or person has.
type notebook struct {
	bin  string
	dir  string
	env  []string
	loc  string
	st   *storeTarget
	priv string
	mcp  *mcpServe // set: pull and commit go to this serve process over MCP stdio (driverServe)
}

// Private roots of the writers of a contention or agents row
// (-private-roots). One user's agents on one machine share the default
// private root, and with it one object cache per store: what one writer
// fetched or uploaded, the others find locally. That is rootsShared, the
// default. rootsOwn gives every writer a private root of its own, so each
// fetches every other writer's changes from the store: the model of one
// host per writer (over loopback), the pessimistic case.
const (
	rootsShared = "shared"
	rootsOwn    = "own"
)

// newNotebook makes a notebook directory and private root under base for
// loc. Proxied processes send their S3 requests through the counting proxy.
func (r *runner) newNotebook(st *storeTarget, loc, base string, proxied bool) *notebook {
	return r.newNotebookIn(st, loc, base, filepath.Join(base, "private"), proxied)
}

// newWriter makes the notebook directory of one writer of a row under
// base, whose private root is under rowBase when the row's writers share
// one (rootsShared: one root per row, and each row has a location of its
// own) or under base otherwise.
func (r *runner) newWriter(st *storeTarget, loc, rowBase, base string, proxied bool) *notebook {
	priv := filepath.Join(base, "private")
	if r.rootsSetting() == rootsShared {
		priv = filepath.Join(rowBase, "private")
	}
	return r.newNotebookIn(st, loc, base, priv, proxied)
}

// rootsSetting is the run's -private-roots.
func (r *runner) rootsSetting() string {
	if r.prof.privateRoots == rootsOwn {
		return rootsOwn
	}
	return rootsShared
}

// withRoots marks a row label with its private roots setting (results
// written before the setting existed had every writer's root its own).
func withRoots(s, roots string) string {
	if roots == "" {
		roots = rootsOwn
	}
	return s + ", " + roots + " P"
}

// newNotebookIn makes a notebook directory under base for loc, with its
// private state in priv.
func (r *runner) newNotebookIn(st *storeTarget, loc, base, priv string, proxied bool) *notebook {
	env := append(cleanEnv(), st.env(loc, proxied)...)
	env = append(env, "SLIVINGDOC_PRIVATE_ROOT="+priv, "LOG_LEVEL=warn", "NO_COLOR=1")
	return &notebook{bin: r.bin, dir: filepath.Join(base, "notes"), env: env, loc: loc, st: st, priv: priv}
}

// cleanEnv is this process's environment without anything that would
// configure slivingdoc or the AWS SDK behind the load generator's back.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "SLIVINGDOC_") || strings.HasPrefix(k, "AWS_") || k == "LOG_LEVEL" || k == "NO_COLOR" {
			continue
		}
		env = append(env, kv)
	}
	return env
}

func (n *notebook) pull(ctx context.Context) (Outcome, error) {
	if n.mcp != nil {
		return n.mcp.pull(ctx)
	}
	return runCLI(ctx, n.bin, n.env, "pull", n.dir)
}

func (n *notebook) commit(ctx context.Context, msg string) (Outcome, error) {
	if n.mcp != nil {
		return n.mcp.commit(ctx, msg)
	}
	return runCLI(ctx, n.bin, n.env, "commit", n.dir, "-m", msg)
}

// mustOK runs op and turns a domain error into an error: for set-up steps
// that must succeed.
func mustOK(o Outcome, err error) (Outcome, error) {
	if err == nil && o.Code != "" {
		err = fmt.Errorf("unexpected %s · %s:\n%s", o.Code, o.Reason, o.Stdout)
	}
	return o, err
}

// fill writes files x size bytes under dir, 100 files per subdirectory,
// and returns their slash paths.
func fill(dir string, files, size int) ([]string, error) {
	names := make([]string, files)
	for i := range files {
		names[i] = fmt.Sprintf("d%03d/note-%05d.md", i/100, i)
		p := filepath.Join(dir, filepath.FromSlash(names[i]))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, bench.NoteText(i, size), 0o644); err != nil {
			return nil, err
		}
	}
	return names, nil
}

// appendTo appends data to the file at path.
func appendTo(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// gitRef is a git repository holding a copy of a notebook tree: the
// reference for the no-op scans.
type gitRef struct{ dir string }

// newGitRef copies src into dir, commits it, ages the files (git re-hashes
// "racily clean" files on every status; a user's repository is older than
// a second) and warms the index. Automatic gc is off: a background repack
// inside a timed round would measure git's housekeeping, not its scan.
func newGitRef(ctx context.Context, src, dir string) (*gitRef, error) {
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		return nil, err
	}
	old := time.Now().Add(-time.Minute)
	if err := filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, old, old)
	}); err != nil {
		return nil, err
	}
	g := &gitRef{dir}
	for _, args := range [][]string{{"init", "-q"}, {"config", "gc.auto", "0"}, {"add", "-A"}, {"-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "commit", "-q", "-m", "tree"}} {
		if _, _, err := runTimed(ctx, dir, "git", args...); err != nil {
			return nil, err
		}
	}
	_, err := g.status(ctx)
	return g, err
}

func (g *gitRef) status(ctx context.Context) (Sample, error) {
	s, _, err := runTimed(ctx, g.dir, "git", "status", "--porcelain")
	return s, err
}

// commitAll times `git commit -qam`: a local commit with no network, for
// scale next to the notebook's published commit.
func (g *gitRef) commitAll(ctx context.Context, msg string) (Sample, error) {
	s, _, err := runTimed(ctx, g.dir, "git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "commit", "-qam", msg)
	return s, err
}
