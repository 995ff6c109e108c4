package server

// History for people: the Engine's calls over package history. Each call
// checks its arguments, probes the store, reads `current`, syncs the
// object cache to it and opens a history.View on them (readHistory,
// openHistory); the View reads the retained publications, its results are
// the Engine's, and this file maps its errors to the Engine's codes
// (historyErr).

import (
	"context"
	"errors"

	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/dircall"
	"github.com/slivingdoc/slivingdoc/server/history"
	"github.com/slivingdoc/slivingdoc/server/objcache"
)

// historyErr maps an error of package history: a refusal to its
// INVALID_REQUEST reason, a failed step through fail under that step's
// name (else under stage), and the Engine's own errors as they are.
func (e *Engine) historyErr(stage string, err error) error {
	var (
		de  *diag.Error
		arg *history.ArgumentError
		un  *history.UnavailableError
		op  *history.OpError
	)
	switch {
	case err == nil:
		return nil
	case errors.As(err, &arg):
		return diag.InvalidRequest(diag.ReasonInvalidArgument, arg.Msg)
	case errors.As(err, &un):
		return diag.New(diag.CodeInvalidRequest, diag.ReasonHistoryUnavailable, un.Msg, nil)
	case errors.As(err, &op):
		return e.env.Fail(op.Op, op.Err)
	case errors.As(err, &de):
		return de
	}
	return e.env.Fail(stage, err)
}

// openHistory reads `current`, syncs the active chain's cache and learns
// how far back the history reads.
func (e *Engine) openHistory(ctx context.Context) (*history.View, error) {
	h, _, err := e.openHistoryAt(ctx)
	return h, err
}

// openHistoryAt is openHistory that also returns the View's object
// source, through which a session can read the same cache.
func (e *Engine) openHistoryAt(ctx context.Context) (*history.View, *objcache.Source, error) {
	state, err := e.env.Notebook.ReadCurrent(ctx)
	if err != nil {
		return nil, nil, e.env.Fail("read current", err)
	}
	chain, err := e.env.Sync(ctx, state)
	if err != nil {
		return nil, nil, err
	}
	ret, err := e.env.Notebook.Retention(ctx, state)
	if err != nil {
		return nil, nil, e.env.Fail("read history", err)
	}
	src := e.env.Caches.Source(chain)
	return history.NewView(ctx, history.Observed{State: state, Retention: ret, Objects: src, Engine: e.env.History(), Dir: e.storeDir(), Log: e.env.Log}), src, nil
}

// readHistory probes the store and runs read on a View of the state it
// opens (again once, after healing a damaged cache), mapping read's errors
// under stage: the steps every reading call of history shares.
func readHistory[T any](ctx context.Context, e *Engine, stage string, read func(*history.View) (T, error)) (T, error) {
	var none T
	if err := e.Probe(ctx); err != nil {
		return none, err
	}
	return withHealing(e, func() (T, error) {
		h, err := e.openHistory(ctx)
		if err != nil {
			return none, err
		}
		out, err := read(h)
		if err != nil {
			return none, e.historyErr(stage, err)
		}
		return out, nil
	})
}

// normalizePath is history.NormalizePath with its refusal as an *Error.
func normalizePath(p string) (string, error) {
	c, err := history.NormalizePath(p)
	var arg *history.ArgumentError
	if errors.As(err, &arg) {
		return "", diag.InvalidRequest(diag.ReasonInvalidArgument, arg.Msg)
	}
	return c, err
}

// History returns retained publications, newest first, as q selects them:
// what each changed (diffstat, and both versions with q.Content). It reads
// only the publications it returns (and, with a path or time filter, the
// commits it passes over) from the object cache after syncing it.
func (e *Engine) History(ctx context.Context, q history.Query) ([]history.Entry, error) {
	out, _, err := e.historyAfter(ctx, q, 0)
	return out, err
}

// historyAfter is History restricted to the publications above generation
// after; it also returns the state of `current` it read, whose generation
// is where the next call's after starts (Watch).
func (e *Engine) historyAfter(ctx context.Context, q history.Query, after uint64) ([]history.Entry, remote.State, error) {
	if q.Limit <= 0 {
		return []history.Entry{}, remote.State{}, nil
	}
	q.Limit = min(q.Limit, maxLog)
	var err error
	if q.Path, err = normalizePath(q.Path); err != nil {
		return nil, remote.State{}, err
	}
	var state remote.State
	out, err := readHistory(ctx, e, "read history", func(h *history.View) ([]history.Entry, error) {
		state = h.State()
		return h.Entries(q, after)
	})
	return out, state, err
}

// Show returns publication gen with both versions of every file it
// changed (restricted to filterPath when set). A generation that is
// retained but published nothing (a checkpoint swap took it) yields an
// entry without time, message or files.
func (e *Engine) Show(ctx context.Context, gen uint64, filterPath string) (*history.Entry, error) {
	filter, err := normalizePath(filterPath)
	if err != nil {
		return nil, err
	}
	return readHistory(ctx, e, "read publication", func(h *history.View) (*history.Entry, error) {
		return h.Show(gen, filter)
	})
}

// FileAt returns the content of the file p at generation gen. A path that
// is no file there is INVALID_REQUEST/INVALID_ARGUMENT.
func (e *Engine) FileAt(ctx context.Context, gen uint64, p string) ([]byte, error) {
	p, err := normalizePath(p)
	if err != nil {
		return nil, err
	}
	if p == "" {
		return nil, diag.InvalidRequest(diag.ReasonInvalidArgument, "Name a file: GEN:PATH.")
	}
	return readHistory(ctx, e, "read file", func(h *history.View) ([]byte, error) {
		return h.FileAt(gen, p)
	})
}

// Diff compares the trees at generations from and to (history.Latest:
// the accepted head), restricted to filterPath, with both versions of
// each changed file.
func (e *Engine) Diff(ctx context.Context, from, to uint64, filterPath string) ([]history.Change, error) {
	filter, err := normalizePath(filterPath)
	if err != nil {
		return nil, err
	}
	return readHistory(ctx, e, "diff", func(h *history.View) ([]history.Change, error) {
		return h.Diff(from, to, filter)
	})
}

// LocalDiff compares the directory's baseline with what is on disk now:
// what the next commit would publish (before merging with later
// publications). A directory never pulled shows every file as added.
func (e *Engine) LocalDiff(ctx context.Context, dir, filterPath string) ([]history.Change, error) {
	filter, err := normalizePath(filterPath)
	if err != nil {
		return nil, err
	}
	return withHealing(e, func() ([]history.Change, error) {
		s, err := e.begin(ctx, dir)
		if err != nil {
			return nil, err
		}
		defer s.End()
		if err := s.OpenL(false); err == nil {
			if _, err := s.ScanL(); err != nil {
				return nil, err
			}
		} else if s.Base == nil {
			s.Scan = &dircall.Scan{}
		} else {
			return nil, err
		}
		if s.Base != nil {
			state, err := e.env.Notebook.ReadCurrent(ctx)
			if err != nil {
				return nil, e.env.Fail("read current", err)
			}
			s.Base = s.Pending.Adopt(s.Ctx, s.Env.Notebook, s.Base, state)
			chain, err := e.env.Sync(ctx, state)
			if err != nil {
				return nil, err
			}
			s.Src = e.env.Caches.Source(chain)
		}
		out, err := history.Compare(s.BaseFiles(), s.Scan.Files, filter, s.Load)
		if err != nil {
			return nil, e.env.Fail("read content", err)
		}
		s.SaveStats()
		return out, nil
	})
}
