package server

// This file is the contract the CLI and the MCP adapter code against while
// the notebook operations are being built. The server owner replaces the
// bodies (and may move declarations to focused files); the signatures here
// may grow but must not change.

import (
	"context"
	"log/slog"
	"time"

	"github.com/slivingdoc/slivingdoc/remote"
)

// Config is everything the operations need; the CLI builds it from flags,
// environment and defaults (DESIGN §8).
type Config struct {
	Store         remote.Store
	PrivateRoot   string // P: private state and the object cache; never inside WorkspaceRoot
	WorkspaceRoot string // request paths must resolve at or below it
	DefaultDir    string // the directory used when the request path is empty
	Writable      []string
	ReadOnly      []string
	CommitRetries int
	// CheckpointPacks and RetainedCheckpoints configure checkpoints.
	CheckpointPacks     int
	RetainedCheckpoints int
	Logger              *slog.Logger
}

// Engine runs pull, commit, status and log. It is safe for concurrent use;
// calls on one directory are serialised in the process and across processes.
type Engine struct{}

// New validates cfg and returns the engine.
func New(cfg Config) (*Engine, error) { panic("server: New not implemented yet") }

// Close releases the engine's resources.
func (e *Engine) Close() error { panic("server: Engine.Close not implemented yet") }

// FileStat is one file's line delta.
type FileStat struct {
	Path       string
	Insertions int
	Deletions  int
}

// Result is the outcome of a successful pull or commit.
type Result struct {
	Path       string // the resolved visible directory
	Generation uint64 // the accepted generation after the operation
	Files      []FileStat
}

// PathSets returns the normalised, sorted writable and read-only sets.
func (e *Engine) PathSets() (writable, readOnly []string) {
	panic("server: Engine.PathSets not implemented yet")
}

// ResolveDir resolves a request path ("" = DefaultDir; "~/" expanded) and
// checks it is at or below the workspace root. Errors are *Error.
func (e *Engine) ResolveDir(path string) (string, error) {
	panic("server: Engine.ResolveDir not implemented yet")
}

// Pull writes the merge of baseline, visible directory and accepted state
// into the directory and records the accepted state. Errors are *Error.
func (e *Engine) Pull(ctx context.Context, path string) (*Result, error) {
	panic("server: Engine.Pull not implemented yet")
}

// Commit publishes the directory's changes and incorporates concurrent
// non-conflicting ones. Errors are *Error.
func (e *Engine) Commit(ctx context.Context, path, message string) (*Result, error) {
	panic("server: Engine.Commit not implemented yet")
}

// Status reports local changes against the baseline and whether the remote
// moved, without publishing.
type Status struct {
	Path           string
	BaseGeneration uint64
	Generation     uint64 // accepted generation now
	Added          []string
	Modified       []string
	Deleted        []string
}

func (e *Engine) Status(ctx context.Context, path string) (*Status, error) {
	panic("server: Engine.Status not implemented yet")
}

// LogEntry is one accepted publication.
type LogEntry struct {
	Generation uint64
	Time       time.Time
	Message    string
	Files      []FileStat
}

// Log returns up to n recent publications, newest first.
func (e *Engine) Log(ctx context.Context, n int) ([]LogEntry, error) {
	panic("server: Engine.Log not implemented yet")
}
