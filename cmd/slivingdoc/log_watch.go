package main

// log --watch: the recent publications, then each new one as it lands
// (server.Engine.Watch polls the store), until interrupted.

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os/signal"
	"syscall"

	"github.com/slivingdoc/slivingdoc/server"
	"github.com/slivingdoc/slivingdoc/server/history"
)

// errOutputClosed ends a watch whose reader went away (log --watch | head).
var errOutputClosed = errors.New("output closed")

// watchLog prints the recent publications as log does (newest first), then
// each new publication, oldest first, in the same form; with asJSON one
// compact JSON object per line (JSON Lines), since an array never ends.
// Interrupted (SIGINT, SIGTERM) or with its output closed, it returns nil:
// both are how a watch is meant to end.
func watchLog(ctx context.Context, e *server.Engine, q history.Query, out io.Writer, asJSON, patch bool) error {
	// A write to a closed pipe then fails with EPIPE instead of killing
	// the process with SIGPIPE, so the watch ends with status 0.
	signal.Ignore(syscall.SIGPIPE)
	w := &watchWriter{w: out}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	printed := false
	print := func(en history.Entry) error {
		switch {
		case asJSON:
			_ = enc.Encode(logJSONOf(en, patch))
		case patch:
			if printed {
				w.Write([]byte("\n"))
			}
			printLogPatch(w, []history.Entry{en})
		default:
			if printed {
				w.Write([]byte("\n"))
			}
			printLog(w, []history.Entry{en})
		}
		printed = true
		if w.err != nil {
			return errOutputClosed
		}
		return nil
	}
	err := e.Watch(ctx, server.WatchOptions{
		Query: q,
		Recent: func(entries []history.Entry) error {
			for _, en := range entries {
				if err := print(en); err != nil {
					return err
				}
			}
			return nil
		},
		New: print,
	})
	if errors.Is(err, errOutputClosed) {
		return nil
	}
	return err
}

// watchWriter remembers the first failed write; later writes are dropped.
// It unwraps to the writer it wraps, so colour follows the real output.
type watchWriter struct {
	w   io.Writer
	err error
}

func (w *watchWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	n, err := w.w.Write(p)
	w.err = err
	return n, err
}

func (w *watchWriter) Unwrap() io.Writer { return w.w }
