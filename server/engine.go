package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/commit"
	"github.com/slivingdoc/slivingdoc/server/dircall"
	"github.com/slivingdoc/slivingdoc/server/dirstate"
	"github.com/slivingdoc/slivingdoc/server/objcache"
	"github.com/slivingdoc/slivingdoc/server/pstate"
	"github.com/slivingdoc/slivingdoc/server/rules"
	"github.com/slivingdoc/slivingdoc/server/storeview"
	"github.com/slivingdoc/slivingdoc/server/workdir"
)

// Config is everything the operations need; the CLI builds it from flags,
// environment and defaults (DESIGN §8).
//
// Zero values, the one convention of Config and remote.Options: a field's
// zero value is its default, and the default is stated on the field. Where
// the default is something and "nothing" is also a valid choice, a named
// constant asks for nothing (NoRetainWindow here, remote.NoRetries there).
// Config's defaults are those of an embedder that has not asked for more:
// RetainedCheckpoints defaults to none (the CLI passes its
// --retained-checkpoints value). A commit has no retries to configure:
// it waits until its change is accepted or declined (docs/publication.md).
type Config struct {
	Store         remote.Store
	PrivateRoot   string // P: private state and the object cache; never inside WorkspaceRoot
	WorkspaceRoot string // request paths must resolve at or below it
	DefaultDir    string // the directory used when the request path is empty
	Writable      []string
	ReadOnly      []string
	// CheckpointPacks is the active-chain length that triggers a
	// background checkpoint after a commit (0 = remote.DefaultCheckpointPacks);
	// RetainedCheckpoints is checked (0..64) and otherwise ignored: every
	// writer's fold must compute the same `current`, so a version-4 fold
	// keeps one older checkpoint whatever a process is told
	// (remote.RetainedV4).
	CheckpointPacks     int
	RetainedCheckpoints int
	// Retain is the history window by time (--retain; 0 =
	// DefaultRetain, NoRetainWindow = none): history segments newer than
	// this stay listed, and their increments kept, even below the oldest
	// kept checkpoint.
	Retain time.Duration
	Logger *slog.Logger
	// Ignore adds patterns to the ignore rules (workdir/ignore.go); with
	// NoDefaultIgnores the built-in set is off. AllowSecrets turns off the
	// refusal of commits that add a recognised credential (server/commit).
	Ignore           []string
	NoDefaultIgnores bool
	AllowSecrets     bool
	// LongLived says the process serves many calls (serve): the engine
	// then keeps what a call learned of each directory for the next
	// (server/dirstate), validated on every call.
	LongLived bool
	// Sleep and Now, if set, are the publication protocol's clock (its
	// waits and the instants it times them from; remote.Options' too). The fleet simulation's slow motion passes a clock in the
	// model's time; nil is the real clock.
	Sleep func(ctx context.Context, d time.Duration) error
	Now   func() time.Time
	// CondEstimate and RTT are version 4's estimates of one conditional
	// write of `current` and of one round trip to the store, from which
	// its waits are timed (publish.Options); zero (both): learned from
	// the store's own requests (server/storeview), starting from a few
	// milliseconds for a store on this machine (file://) and publish's
	// defaults, made for object stores, otherwise. They decide how often
	// a waiting writer reads `current`, never what is accepted.
	CondEstimate, RTT time.Duration
	// StoreLocator, opaque to the engine, says how to open Store again
	// (the CLI's store settings, without credentials). The engine
	// records it, with the store's identity and ID, for each directory
	// it pulls (server/storeview), so that a later command on that directory
	// without store settings uses the same store.
	StoreLocator string
}

// Engine runs pull, commit, status and log. It is safe for concurrent use;
// calls on one directory are serialised in the process and across processes.
type Engine struct {
	// env is what every call uses of the engine (server/dircall): the
	// store as the engine reads it, the notebook, the log, the path sets,
	// the ignore rules, the object caches, which store it is, the
	// per-directory memories; made in New, never changed after.
	env *dircall.Env

	private  string // absolute, cleaned, outside the workspace (env.Workspace)
	storeKey string // hash of the store's URL identity: names P/dirs/ keys and, for a store not yet named, P/stores/<storeKey>
	locator  string // Config.StoreLocator

	dirMu sync.Mutex
	dirs  map[string]*sync.Mutex // per-L in-process serialisation

	probe storeview.Verdict // the guarantees probe's verdict (probe.go, server/storeview)

	// publishing is what every commit publishes with (server/commit):
	// publish's options, the store's learned estimates, and the work
	// accepted commits leave to the background, which Close waits for.
	publishing *commit.Publishing
	afterReply storeview.AfterReply // a long-lived engine's work left after a reply
}

// DefaultRetain is the default history window by time (DESIGN §5);
// NoRetainWindow as Config.Retain keeps history by checkpoints only.
const (
	DefaultRetain  = 30 * 24 * time.Hour
	NoRetainWindow = time.Duration(-1)
)

// maxRetained bounds Config.RetainedCheckpoints (DESIGN §8).
const maxRetained = 64

// New validates cfg and returns the engine. Its errors are configuration
// errors (plain errors, not *Error): they are the operator's to fix.
func New(cfg Config) (*Engine, error) {
	if cfg.Store == nil {
		return nil, errors.New("server: no store configured")
	}
	if cfg.CheckpointPacks < 0 || cfg.RetainedCheckpoints < 0 || cfg.RetainedCheckpoints > maxRetained {
		return nil, fmt.Errorf("server: checkpoint packs must be >= 1 and retained checkpoints 0..%d", maxRetained)
	}
	if cfg.CheckpointPacks == 0 {
		cfg.CheckpointPacks = remote.DefaultCheckpointPacks
	}
	ws := cfg.WorkspaceRoot
	if ws == "" {
		ws = cfg.DefaultDir
	}
	if ws == "" {
		return nil, errors.New("server: no workspace root configured")
	}
	ws, err := absClean(ws)
	if err != nil {
		return nil, fmt.Errorf("server: workspace root: %w", err)
	}
	def := cfg.DefaultDir
	if def == "" {
		def = ws
	}
	if def, err = absClean(def); err != nil {
		return nil, fmt.Errorf("server: default directory: %w", err)
	}
	if !rules.Within(ws, def) {
		return nil, errors.New("server: the default directory must be at or below the workspace root")
	}
	if cfg.PrivateRoot == "" {
		return nil, errors.New("server: no private root configured")
	}
	priv, err := absClean(cfg.PrivateRoot)
	if err != nil {
		return nil, fmt.Errorf("server: private root: %w", err)
	}
	// Private state inside the workspace would be visible (and editable) as
	// notebook content; compare real paths so a symlink cannot hide it.
	// (Each resolved once: a resolution is an lstat per path component.)
	realWS, realPriv := rules.RealPath(ws), rules.RealPath(priv)
	if rules.Within(realWS, realPriv) || rules.Within(ws, priv) {
		return nil, errors.New("server: the private root must not be inside the workspace root")
	}
	// Nor the other way round: P's files would be notebook files.
	if rules.Within(realPriv, realWS) || rules.Within(priv, ws) {
		return nil, errors.New("server: the workspace root must not be inside the private root")
	}
	sets, err := rules.NewSets(cfg.Writable, cfg.ReadOnly)
	if err != nil {
		return nil, err
	}
	ignore, err := workdir.NewIgnore(cfg.Ignore, !cfg.NoDefaultIgnores)
	if err != nil {
		return nil, err
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	opts := commit.Options(cfg.Store.Identity(), cfg.Sleep, cfg.Now, cfg.CondEstimate, cfg.RTT)
	e := &Engine{
		env: &dircall.Env{Log: logger, Sets: sets, Ignore: ignore, Secrets: !cfg.AllowSecrets,
			Workspace: rules.Workspace{Root: ws, Default: def}},

		private:  priv,
		storeKey: pstate.HashKey(cfg.Store.Identity()),
		locator:  cfg.StoreLocator,
		dirs:     map[string]*sync.Mutex{},
	}
	var later func(func()) // a long-lived engine records a higher generation and keeps its pack after its reply
	if cfg.LongLived {
		e.env.Recent = objcache.NewRecent()
		e.env.Memories = dirstate.NewMemories()
		later = e.afterReply.Start
		e.afterReply.Hold = true // until the transport's reply (Replied) or the next call
	}
	// Keyed by the store ID P recorded for this URL, if any; Identify
	// reads it from the store otherwise (server/storeview).
	e.env.Ident = storeview.NewIdentity(storeview.IdentityConfig{Private: priv, Store: cfg.Store, Locator: cfg.StoreLocator,
		Later: later, Switched: e.probe.Forget, Log: logger})
	// Every read and write of the store goes through the host's copies
	// of the objects writers exchange (server/storeview).
	ident := e.env.Ident
	e.env.Store = storeview.WithHostObjects(cfg.Store, func() string { return filepath.Join(ident.Dir(), "objects") })
	e.env.Notebook = remote.Open(e.env.Store, remote.Options{Observe: e.env.Ident.Observe, Sleep: cfg.Sleep, Now: cfg.Now,
		CheckpointPacks: cfg.CheckpointPacks}) // which rollups its builders build
	e.env.Caches = objcache.New(e.env.Notebook, logger, ident.Dir, func() (uint64, bool) { return pstate.OldestBaseline(priv) })
	e.env.Probe = &e.probe
	retain := cfg.Retain
	switch {
	case retain == 0:
		retain = DefaultRetain
	case retain < 0:
		retain = 0 // remote.CheckpointOptions.RetainFor 0: no window by time
	}
	e.publishing = &commit.Publishing{
		Env:        e.env,
		Opts:       opts,
		Timing:     storeview.NewTiming(opts, cfg.CondEstimate != 0 || cfg.RTT != 0),
		Background: &commit.Background{Env: e.env, Retain: retain, CheckpointPacks: cfg.CheckpointPacks, K: opts.K, M: opts.M},
		Later:      later, // the cache's copy of an accepted pack, after the reply
	}
	return e, nil
}

// Close waits for the work left after replies and for a background
// checkpoint, then releases the engine's resources (open object caches).
func (e *Engine) Close() error {
	e.afterReply.Wait()
	e.publishing.Background.Wait()
	e.env.Memories.Close()
	return e.env.Caches.Close()
}

// Replied tells a long-lived engine that a reply was written: the work
// its calls left for after their replies (the cache's copy of an
// accepted pack, the highest generation seen) starts now. Without it,
// that work starts when the next call begins or the engine closes.
func (e *Engine) Replied() { e.afterReply.Release() }

// PathSets returns the normalised, sorted writable and read-only sets.
func (e *Engine) PathSets() (writable, readOnly []string) {
	return e.env.Sets.Entries()
}

// IgnorePatterns returns the configured ignore patterns (--ignore), not
// the built-in set: the surfaces name only what the operator added.
func (e *Engine) IgnorePatterns() []string { return e.env.Ignore.Patterns() }

// Status reports local changes against the baseline and whether the remote
// moved, without publishing.
type Status struct {
	Path           string
	BaseGeneration uint64
	Generation     uint64 // accepted generation now
	Added          []string
	Modified       []string
	Deleted        []string
	Ignored        []string // entries of the directory the ignore rules leave out (directories end in '/'; nil: none)
}

// dirLock serialises calls on one visible directory inside the process;
// the lock file in P (pstate.Lock) does it across processes.
func (e *Engine) dirLock(dir string) *sync.Mutex {
	e.dirMu.Lock()
	defer e.dirMu.Unlock()
	m := e.dirs[dir]
	if m == nil {
		m = &sync.Mutex{}
		e.dirs[dir] = m
	}
	return m
}

func absClean(p string) (string, error) {
	p, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.Clean(p), nil
}
