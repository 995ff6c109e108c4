package server

import (
	"context"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/dircall"
	"github.com/slivingdoc/slivingdoc/server/objcache"
	"github.com/slivingdoc/slivingdoc/server/plan"
)

// The engine's part every call uses is server/dircall's Env (e.env),
// built once in New; these are the root's names for what it holds.

// FileStat is one file's line delta.
type FileStat = dircall.FileStat

// Result is the outcome of a successful pull or commit.
type Result = dircall.Result

func (e *Engine) fail(stage string, err error) *diag.Error { return e.env.Fail(stage, err) }
func (e *Engine) ignoredPath(p string) bool                { return e.env.IgnoredPath(p) }
func (e *Engine) probeFile() string                        { return e.env.ProbeFile() }

func (e *Engine) sync(ctx context.Context, state remote.State) (*objcache.Chain, error) {
	return e.env.Sync(ctx, state)
}

func mapErr(err error) *diag.Error                      { return dircall.MapErr(err) }
func baselineLost() *diag.Error                         { return dircall.BaselineLost() }
func detach(ctx context.Context) context.Context        { return dircall.Detach(ctx) }
func diffstat(changes []plan.Change) []dircall.FileStat { return dircall.Diffstat(changes) }

func treeDelta(src cas.Source, from, to map[string]cas.ID) ([]FileStat, error) {
	return dircall.TreeDelta(src, from, to)
}
