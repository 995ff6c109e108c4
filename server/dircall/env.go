package dircall

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/dirstate"
	"github.com/slivingdoc/slivingdoc/server/history"
	"github.com/slivingdoc/slivingdoc/server/objcache"
	"github.com/slivingdoc/slivingdoc/server/rules"
	"github.com/slivingdoc/slivingdoc/server/storeview"
	"github.com/slivingdoc/slivingdoc/server/workdir"
)

// Env is what the engine lends every call: made once, never changed
// after (the values it points to keep their own locks).
type Env struct {
	Log      *slog.Logger
	Store    remote.Store     // the store as the engine reads it (server/storeview's host objects)
	Notebook *remote.Notebook // over Store
	Caches   *objcache.Caches // the object caches (package objcache)
	Recent   *objcache.Recent // nil unless long-lived: the content its commits published
	Ident    *storeview.Identity
	Probe    *storeview.Verdict // the guarantees probe's verdict
	Ignore   *workdir.Ignore
	Sets     rules.Sets
	Secrets  bool // refuse commits adding a recognised credential
	// Memories is what a long-lived engine keeps of each directory
	// between calls (nil: a CLI process, which keeps nothing).
	Memories *dirstate.Memories
	// Workspace is where calls may open L: at or below its root,
	// checked lexically and through os.Root (Call.OpenL).
	Workspace rules.Workspace
}

// ProbeFile is where P keeps the probe's verdict for the store as last
// identified.
func (env *Env) ProbeFile() string { return filepath.Join(env.Ident.Dir(), "probe") }

// Fail maps err to a domain error and logs the cause (the only place the
// cause, which may hold private paths, is written).
func (env *Env) Fail(stage string, err error) *diag.Error {
	de := MapErr(err)
	env.StoreTrouble(err)
	if errors.Is(err, context.Canceled) {
		// The caller's decision, not store trouble (mcpserver logs why).
		env.Log.Info("operation cancelled", "stage", stage)
		return de
	}
	if de.Cause != nil {
		env.Log.Warn("operation failed", "stage", stage, "code", string(de.Code), "reason", de.Reason, "err", de.Cause)
	}
	return de
}

// MapErr turns any failure into a domain error (diag.Map, the one mapping
// of lower-level failures), after the one failure that is the engine's
// own: a commit that found the store older than the directory's record
// (ErrRecordNewer) is BASELINE_LOST, as OutlivedRecord says. A domain
// error already built passes through unchanged, as in diag.Map.
func MapErr(err error) *diag.Error {
	var de *diag.Error
	if !errors.As(err, &de) && errors.Is(err, ErrRecordNewer) {
		return OutlivedRecord()
	}
	return diag.Map(err)
}

// StoreTrouble forgets the probe verdict after an unexpected store error,
// so the next call (in any process) proves the store again. Lost races,
// cancellations and absent objects are expected and keep the verdict.
func (env *Env) StoreTrouble(err error) { env.Probe.Trouble(err, env.ProbeFile, env.Log) }

// Sync makes the cache of state's chain hold the closure of state's head
// (objcache.Caches.Sync), its failures mapped.
func (env *Env) Sync(ctx context.Context, state remote.State) (*objcache.Chain, error) {
	c, err := env.Caches.Sync(ctx, state)
	if err == nil {
		return c, nil
	}
	var fe *objcache.FetchError
	if errors.As(err, &fe) {
		return nil, env.PackFailure(err)
	}
	return nil, MapErr(err)
}

// PackFailure reports a failure of the caches to fetch or keep a pack as
// the pack's, after forgetting the probe verdict if the store is in
// trouble; any other failure is returned as it is.
func (env *Env) PackFailure(err error) error {
	var fe *objcache.FetchError
	if !errors.As(err, &fe) {
		return err
	}
	env.StoreTrouble(fe.Err)
	return diag.MapPack(fe.Err)
}

// IgnoredPath reports whether the scan takes A's file at p for one L
// leaves out (the test its walk applies to each path).
func (env *Env) IgnoredPath(p string) bool {
	return env.Ignore.MayMatchBytes([]byte(p)) && env.Ignore.MatchPath(p)
}

// Detach keeps a call's values but not its cancellation: once the store
// accepted a publication, L and P are brought up to date regardless.
func Detach(ctx context.Context) context.Context { return context.WithoutCancel(ctx) }

// History is what a history.View asks of the engine.
func (env *Env) History() history.Engine { return historyEngine{env} }

// historyEngine is Env as a history.Engine.
type historyEngine struct{ env *Env }

func (h historyEngine) ChainsBetween(ctx context.Context, state remote.State, floor, from, to uint64) ([]remote.Chain, error) {
	return h.env.Notebook.ChainsBetween(ctx, state, floor, from, to)
}

func (h historyEngine) KeyOf(c remote.Chain) string       { return objcache.KeyOf(c) }
func (h historyEngine) KeyAt(cp remote.Checkpoint) string { return objcache.KeyAt(cp) }

func (h historyEngine) Fetch(ctx context.Context, g history.Group) error {
	return h.env.fetchGroup(ctx, g)
}

// fetchGroup makes the cache named g.Key hold g's packs (each verified by
// remote and cas before it is kept).
func (env *Env) fetchGroup(ctx context.Context, g history.Group) error {
	c, err := env.Caches.Open(g.Key)
	if err != nil {
		return MapErr(err)
	}
	missing := objcache.MissingPacks(c.Store(), g.Packs)
	if len(missing) > 0 {
		if err := c.Store().Refresh(); err != nil {
			return MapErr(err)
		}
		missing = objcache.MissingPacks(c.Store(), missing)
	}
	var got []cas.NamedPack
	for _, ref := range missing {
		data, err := env.Notebook.FetchPack(ctx, ref)
		if err != nil {
			env.StoreTrouble(err)
			return diag.MapPack(err)
		}
		got = append(got, cas.NamedPack{Name: objcache.PackName(ref), Data: data})
	}
	if err := c.Store().AddPacks(got); err != nil {
		return diag.MapPack(err)
	}
	return nil
}
