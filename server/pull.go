package server

import (
	"context"

	"github.com/slivingdoc/slivingdoc/server/commit"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/pull"
)

// Pull writes the merge of baseline, visible directory and accepted state
// into the directory and records the accepted state. Pull never publishes.
// Overlapping changes leave conflict blocks in the files and return
// CONTENT_CONFLICT/MERGE_CONFLICT (with the new state recorded). Errors
// are *Error.
func (e *Engine) Pull(ctx context.Context, path string) (*Result, error) {
	return withHealing(e, func() (*Result, error) { return e.pull(ctx, path, false) })
}

// PullImplied is Pull for a directory the caller did not name (the CLI's
// working directory): one that holds files but has no record here is
// refused (INVALID_REQUEST / DIRECTORY_NOT_EMPTY) instead of adopted,
// since nobody asked for those files to meet the notebook.
func (e *Engine) PullImplied(ctx context.Context, path string) (*Result, error) {
	return withHealing(e, func() (*Result, error) { return e.pull(ctx, path, true) })
}

func (e *Engine) pull(ctx context.Context, path string, implied bool) (*Result, error) {
	s, err := e.begin(ctx, path)
	if err != nil {
		return nil, err
	}
	defer s.End()
	if err := s.OpenL(true); err != nil {
		return nil, err
	}
	if implied && s.Base == nil && !s.EmptyL() {
		return nil, diag.InvalidRequest(diag.ReasonDirectoryNotEmpty, "")
	}
	// Before the baseline moves on and the record with it (server/commit).
	if err := commit.SettleV4(s.Call, e.publishing); err != nil {
		return nil, err
	}
	res, conflicts, err := pull.Run(s.Call, "pull")
	if err != nil {
		return nil, err
	}
	if len(conflicts) > 0 {
		return nil, pull.ConflictError(conflicts)
	}
	return res, nil
}
