package server

// Watch: the recent publications, then each new one as it lands (log
// --watch).
//
// A poll is one HEAD of `current`. Its ETag changes with every write of
// `current` (each publication, each checkpoint swap), which is all a poll
// needs to know; a HEAD carries no body, where a GET would move the whole
// manifest (up to 16 KiB) on every poll to learn the same thing, and both
// are one request of the same price on S3. Only when the ETag moved does the
// watch read the history above the last generation it printed (a GET of
// `current`, and what the new publications need from the store).
//
// The interval between polls is WatchMinInterval (100 ms) at the start and
// after each poll that found a change, and doubles after each poll that
// found none, up to WatchMaxInterval (1 s). So an idle watch makes at most
// one request per poll and, once nothing has changed for 1.5 s (100 + 200 +
// 400 + 800 ms), at most one poll a second; a new publication shows within
// a second of landing.

import (
	"context"
	"errors"
	"time"

	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/dircall"
	"github.com/slivingdoc/slivingdoc/server/history"
)

// The bounds of the watch's polling interval.
const (
	WatchMinInterval = 100 * time.Millisecond
	WatchMaxInterval = time.Second
)

// WatchOptions are Watch's query and callbacks.
type WatchOptions struct {
	// Query selects the recent publications (Limit of them; none when 0)
	// and filters the new ones by Path, Since and Author; Content loads both
	// versions of each file, as for History. Until must be zero.
	Query history.Query
	// Recent receives the recent publications, newest first, once.
	Recent func([]history.Entry) error
	// New receives each later publication, oldest first, as it lands.
	New func(history.Entry) error
	// Sleep waits d, or returns ctx's error when ctx ends first (nil: a
	// timer). Tests inject it to run the polls without waiting.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Watch prints (through o.Recent, then o.New) the recent publications and
// then every publication accepted after them, until ctx ends, when it
// returns nil. A callback's error ends the watch with that error. A store
// failure that a retry may cure (STORAGE_FAILURE, retryable) is logged and
// the poll tried again at the longest interval; any other ends the watch.
func (e *Engine) Watch(ctx context.Context, o WatchOptions) error {
	if !o.Query.Until.IsZero() {
		return diag.InvalidRequest(diag.ReasonInvalidArgument, "A watch has no end time.")
	}
	sleep := o.Sleep
	if sleep == nil {
		sleep = remote.Sleep
	}
	recent := o.Query
	entries, state, err := e.historyAfter(ctx, recent, 0)
	if err != nil {
		return quiet(ctx, err)
	}
	if recent.Limit <= 0 {
		// No recent publication asked for: the state to watch from.
		if state, err = e.env.Notebook.ReadCurrent(ctx); err != nil {
			return quiet(ctx, e.env.Fail("read current", err))
		}
	}
	if err := o.Recent(entries); err != nil {
		return err
	}
	next := o.Query
	next.Limit = maxLog // more than that between two polls: the newest maxLog
	seen, tag := state.Generation(), state.ETag
	interval := WatchMinInterval
	for {
		if err := sleep(ctx, interval); err != nil {
			return quiet(ctx, err)
		}
		t, err := e.currentTag(ctx)
		if err == nil && t == tag {
			interval = min(2*interval, WatchMaxInterval)
			continue
		}
		var got []history.Entry
		if err == nil {
			got, state, err = e.historyAfter(ctx, next, seen)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if de := dircall.MapErr(err); de.Code == diag.CodeStorageFailure && de.Retryable {
				e.env.Log.Warn("watch: the store did not answer; polling again", "err", err)
				interval = WatchMaxInterval
				continue
			}
			return err
		}
		for i := len(got) - 1; i >= 0; i-- {
			if err := o.New(got[i]); err != nil {
				return err
			}
		}
		seen, tag = max(seen, state.Generation()), state.ETag
		interval = WatchMinInterval
	}
}

// currentTag is the ETag of `current` ("" while the notebook has none): one
// HEAD request.
func (e *Engine) currentTag(ctx context.Context) (string, error) {
	info, err := e.env.Store.Head(ctx, remote.CurrentKey)
	if errors.Is(err, remote.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", e.env.Fail("read current", err)
	}
	return info.ETag, nil
}

// quiet is nil when ctx ended (the caller stopped the watch), else err.
func quiet(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}
