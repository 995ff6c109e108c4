package server

// Blame: for each line of a file as the notebook holds it (the accepted
// head), the publication that last changed it. The walk, its index and its
// cache are package history's (history/blame.go); this is the Engine's
// call.

import (
	"context"
	"fmt"

	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/history"
)

// BlameQuery names the file and the lines Blame reports.
type BlameQuery struct {
	Path string
	// Start and End select the one-based lines [Start, End]; zero Start
	// means from the first line, zero End to the last.
	Start, End int
}

// BlameLine is one line of the file and the publication that last changed
// it.
type BlameLine = history.BlameLine

// BlameResult is the file at the accepted head, line by line.
type BlameResult struct {
	Path       string
	Generation uint64 // the accepted head's generation
	Lines      []BlameLine

	// indexComputed counts the publications whose changed paths the walk
	// computed because the index lacked them (tests).
	indexComputed int
}

// Blame attributes each line of the file q.Path, as the accepted head holds
// it, to the retained publication that last changed it (see
// history/blame.go for the rule). A path that is no file at the head, or a
// line range outside the file, is INVALID_REQUEST/INVALID_ARGUMENT.
func (e *Engine) Blame(ctx context.Context, q BlameQuery) (*BlameResult, error) {
	p, err := NormalizePath(q.Path)
	if err != nil {
		return nil, err
	}
	if p == "" {
		return nil, diag.InvalidRequest(diag.ReasonInvalidArgument, "Name a file of the notebook.")
	}
	if q.Start < 0 || q.End < 0 || (q.End > 0 && q.End < max(q.Start, 1)) {
		return nil, diag.InvalidRequest(diag.ReasonInvalidArgument, fmt.Sprintf("The line range %d,%d is not a range of lines (want START,END with 1 <= START <= END).", q.Start, q.End))
	}
	if err := e.Probe(ctx); err != nil {
		return nil, err
	}
	return withHealing(e, func() (*BlameResult, error) {
		h, err := e.openHistory(ctx)
		if err != nil {
			return nil, err
		}
		res, err := h.Blame(p, q.Start, q.End)
		if err != nil {
			return nil, e.historyErr("blame", err)
		}
		return &BlameResult{Path: res.Path, Generation: res.Generation, Lines: res.Lines, indexComputed: res.IndexComputed}, nil
	})
}
