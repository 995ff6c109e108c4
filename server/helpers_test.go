package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/diag"
)

// agent is one engine with its own workspace and private root: what one
// host (or one CLI user) sees. Several agents may share a store.
type agent struct {
	t   *testing.T
	e   *Engine
	ws  string // workspace root
	dir string // the notebook directory (DefaultDir)
}

type agentOpt func(*Config)

func withSets(writable, readOnly []string) agentOpt {
	return func(c *Config) { c.Writable, c.ReadOnly = writable, readOnly }
}

func newAgent(t *testing.T, store remote.Store, opts ...agentOpt) *agent {
	t.Helper()
	return newAgentTB(t, t, store, opts...)
}

// newAgentTB builds an agent for a test or a benchmark (tb owns the temp
// dirs; t is what the file helpers report to).
func newAgentTB(tb testing.TB, t *testing.T, store remote.Store, opts ...agentOpt) *agent {
	tb.Helper()
	ws := tb.TempDir()
	cfg := Config{
		Store:         store,
		PrivateRoot:   tb.TempDir(),
		WorkspaceRoot: ws,
		DefaultDir:    filepath.Join(ws, "notes"),
		// Estimates of a store on this machine: they time how often a
		// waiting writer reads `current` (publish's defaults are an
		// object store's), never what is accepted.
		CondEstimate: 2 * time.Millisecond,
		RTT:          time.Millisecond,
	}
	for _, o := range opts {
		o(&cfg)
	}
	e, err := New(cfg)
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	tb.Cleanup(func() { e.Close() })
	return &agent{t: t, e: e, ws: ws, dir: cfg.DefaultDir}
}

func (a *agent) path(rel string) string { return filepath.Join(a.dir, filepath.FromSlash(rel)) }

func (a *agent) write(rel, content string) {
	a.t.Helper()
	p := a.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		a.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		a.t.Fatal(err)
	}
}

func (a *agent) appendTo(rel, content string) {
	a.t.Helper()
	f, err := os.OpenFile(a.path(rel), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		a.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(content); err != nil {
		a.t.Fatal(err)
	}
}

func (a *agent) read(rel string) string {
	a.t.Helper()
	b, err := os.ReadFile(a.path(rel))
	if err != nil {
		a.t.Fatal(err)
	}
	return string(b)
}

func (a *agent) remove(rel string) {
	a.t.Helper()
	if err := os.Remove(a.path(rel)); err != nil {
		a.t.Fatal(err)
	}
}

// files returns every regular file of the notebook directory and its content.
func (a *agent) files() map[string]string {
	a.t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(a.dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(a.dir, p)
		b, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		a.t.Fatal(err)
	}
	return out
}

func (a *agent) pull() *Result {
	a.t.Helper()
	res, err := a.e.Pull(context.Background(), "")
	if err != nil {
		a.t.Fatalf("pull: %v", err)
	}
	return res
}

func (a *agent) commit(msg string) *Result {
	a.t.Helper()
	res, err := a.e.Commit(context.Background(), "", msg)
	if err != nil {
		a.t.Fatalf("commit: %v", err)
	}
	return res
}

// domainErr asserts err is an *Error with code and reason.
func domainErr(t *testing.T, err error, code diag.Code, reason string) *diag.Error {
	t.Helper()
	var de *diag.Error
	if !errors.As(err, &de) {
		t.Fatalf("want %s/%s, got %v", code, reason, err)
	}
	if de.Code != code || de.Reason != reason {
		t.Fatalf("want %s/%s, got %s/%s (%s; cause %v)", code, reason, de.Code, de.Reason, de.Message, de.Cause)
	}
	if de.Action == "" || de.Message == "" || de.Files == nil {
		t.Fatalf("incomplete error envelope: %+v", de)
	}
	return de
}

// fileReasons renders an error's files as "path:REASON:start-end,...".
func fileReasons(de *diag.Error) []string {
	var out []string
	for _, f := range de.Files {
		s := f.Path + ":" + f.Reason
		for _, r := range f.Ranges {
			s += fmt.Sprintf(":%d-%d", r.Start, r.End)
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

func stats(files []FileStat) map[string][2]int {
	out := map[string][2]int{}
	for _, f := range files {
		out[f.Path] = [2]int{f.Insertions, f.Deletions}
	}
	return out
}

func equalMaps[V comparable](t *testing.T, what string, got, want map[string]V) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got  %v\n want %v", what, got, want)
	}
}

func lstat(p string) (os.FileInfo, error) { return os.Lstat(p) }
