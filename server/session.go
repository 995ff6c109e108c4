package server

import (
	"context"

	"github.com/slivingdoc/slivingdoc/server/dircall"
	"github.com/slivingdoc/slivingdoc/server/rules"
)

// session is one call on one visible directory (server/dircall's Call,
// which holds its locks, A, the scan of L and the object source; its End
// releases them) with the engine, for the steps of restore and revert
// that are still the root's (history_restore.go).
type session struct {
	*dircall.Call
	e *Engine
}

// begin starts a call on a directory: it proves the store (a cached
// verdict, normally), resolves the request path, takes the in-process and
// cross-process locks and loads the directory's private state.
func (e *Engine) begin(ctx context.Context, path string) (*session, error) {
	e.afterReply.Wait()
	dir, err := e.ResolveDir(path)
	if err != nil {
		return nil, err
	}
	if dir, err = e.notebookDir(dir); err != nil {
		return nil, err
	}
	if err := e.Probe(ctx); err != nil {
		return nil, err
	}
	if err := e.checkStoreOf(dir); err != nil { // remembered.go
		return nil, err
	}
	real := rules.RealPath(dir) // once: the state's key and its "where" record
	st := e.dirStateOf(dir, real)
	st.Mem = e.env.Memories.Of(st.Path)
	// Locks by resolved identity: a symlink alias waits for the real path.
	c, err := dircall.Open(e.env, ctx, dir, st, e.dirLock(st.Path))
	if err != nil {
		return nil, err
	}
	return &session{Call: c, e: e}, nil
}
