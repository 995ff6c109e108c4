package server

import (
	"context"

	"github.com/slivingdoc/slivingdoc/server/commit"
)

// Commit publishes the directory's changes and incorporates concurrent
// non-conflicting ones (DESIGN §6). Errors are *diag.Error.
func (e *Engine) Commit(ctx context.Context, path, message string) (*Result, error) {
	if err := commit.CheckMessage(message); err != nil {
		return nil, err
	}
	return withHealing(e, func() (*Result, error) { return e.commit(ctx, path, message) })
}

// commit is one commit on the directory's call: its checks before the
// first write, then the publication (server/commit).
func (e *Engine) commit(ctx context.Context, path, message string) (*Result, error) {
	s, err := e.begin(ctx, path)
	if err != nil {
		return nil, err
	}
	defer s.End()
	return commit.Run(s.Call, e.publishing, message)
}
