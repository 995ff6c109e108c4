package server

// Blame: for each line of a file as the notebook holds it (the accepted
// head), the publication that last changed it. The walk, its index and its
// cache are package history's (history/blame.go); this is the Engine's
// call.

import (
	"context"

	"github.com/slivingdoc/slivingdoc/server/history"
)

// Blame attributes each line of the file q.Path, as the accepted head holds
// it, to the retained publication that last changed it (see
// history/blame.go for the rule). A path that is no file at the head, or a
// line range outside the file, is INVALID_REQUEST/INVALID_ARGUMENT.
func (e *Engine) Blame(ctx context.Context, q history.BlameQuery) (*history.BlameResult, error) {
	q, err := q.Check()
	if err != nil {
		return nil, e.historyErr("blame", err)
	}
	return readHistory(ctx, e, "blame", func(h *history.View) (*history.BlameResult, error) {
		return h.Blame(q)
	})
}
