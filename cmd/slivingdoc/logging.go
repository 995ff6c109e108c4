package main

// The process logger: key=value records on stderr (slog's text format).
//
// LOG_LEVEL sets the level: a default and per-module overrides, for example
// "info,remote=debug" or "warn". A record's module is the "module"
// attribute its logger carries (logger.With("module", "remote")); records
// without one use the default. Levels: debug, info, warn, error.
//
// Defence in depth for the "no secrets" rule: records at info and above
// pass through the process's scrubber (procScrub: server/diag's policy,
// which replaces object IDs and long hex runs, pack and probe keys, AWS
// access key IDs, URL user info, and the registered private paths and
// credential values). Debug records are for the operator's own machine and
// are not scrubbed.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/slivingdoc/slivingdoc/server/diag"
)

// newLogger returns the process logger writing to w, configured by LOG_LEVEL.
// On os.Stderr records go through the process's dropWriter (logwriter.go),
// so logging never blocks a call.
func newLogger(w io.Writer) *slog.Logger {
	if w == io.Writer(os.Stderr) {
		stderrLog.once.Do(func() { stderrLog.w = newDropWriter(os.Stderr, logQueueBytes) })
		w = stderrLog.w
	}
	lv, err := parseLogLevel(os.Getenv("LOG_LEVEL"))
	h := &moduleHandler{
		inner:  slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}),
		levels: lv,
	}
	l := slog.New(h)
	for _, k := range credentialEnv {
		redactPath(os.Getenv(k))
	}
	if err != nil {
		l.Warn("ignoring LOG_LEVEL", "module", "cli", "err", err.Error())
	}
	return l
}

// logLevels is a parsed LOG_LEVEL.
type logLevels struct {
	def     slog.Level
	modules map[string]slog.Level
}

func (l logLevels) forModule(m string) slog.Level {
	if v, ok := l.modules[m]; ok {
		return v
	}
	return l.def
}

// minimum is the lowest level any module enables: the fast reject in Enabled.
func (l logLevels) minimum() slog.Level {
	m := l.def
	for _, v := range l.modules {
		m = min(m, v)
	}
	return m
}

// parseLogLevel parses "level[,module=level]...". On error it returns the
// default (info) with whatever parsed, and the error.
func parseLogLevel(s string) (logLevels, error) {
	out := logLevels{def: slog.LevelInfo, modules: map[string]slog.Level{}}
	var bad []string
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		mod, lvl, hasMod := strings.Cut(part, "=")
		if !hasMod {
			lvl, mod = mod, ""
		}
		var v slog.Level
		if err := v.UnmarshalText([]byte(strings.TrimSpace(lvl))); err != nil || (hasMod && strings.TrimSpace(mod) == "") {
			bad = append(bad, part)
			continue
		}
		if hasMod {
			out.modules[strings.TrimSpace(mod)] = v
		} else {
			out.def = v
		}
	}
	if len(bad) > 0 {
		return out, fmt.Errorf("bad entries %q: want level[,module=level]... with levels debug, info, warn, error", bad)
	}
	return out, nil
}

// moduleHandler filters by the module of the logger and scrubs records at
// info and above.
type moduleHandler struct {
	inner  slog.Handler
	levels logLevels
	module string
}

func (h *moduleHandler) Enabled(_ context.Context, l slog.Level) bool {
	if h.module == "" {
		// The record may still name its module itself; decide in Handle.
		return l >= h.levels.minimum()
	}
	return l >= h.levels.forModule(h.module)
}

func (h *moduleHandler) Handle(ctx context.Context, r slog.Record) error {
	mod := h.module
	if mod == "" {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "module" {
				mod = a.Value.String()
				return false
			}
			return true
		})
	}
	if r.Level < h.levels.forModule(mod) {
		return nil
	}
	if r.Level >= slog.LevelInfo {
		r = procScrub.Record(r)
	}
	return h.inner.Handle(ctx, r)
}

func (h *moduleHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	n := *h
	for i, a := range attrs {
		if a.Key == "module" {
			n.module = a.Value.String()
		}
		// Attributes attached with With are formatted once by the inner
		// handler, so scrub them here (they are shown at every level).
		attrs[i] = procScrub.Attr(a)
	}
	n.inner = h.inner.WithAttrs(attrs)
	return &n
}

func (h *moduleHandler) WithGroup(name string) slog.Handler {
	n := *h
	n.inner = h.inner.WithGroup(name)
	return &n
}

// credentialEnv are variables whose values no record and no MCP result may
// show (serve passes them to the adapter's redaction too).
var credentialEnv = []string{"AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN"}

// procScrub is the process's scrubber: the one policy (server/diag) plus
// the private root and credential values registered at startup. Every
// diagnostic text of the CLI (reports, usage errors, verify, log records
// at info and above) and the MCP adapter go through it.
var procScrub = &diag.Scrubber{} // static data: a zero Scrubber has no literals yet

// redactPath registers a private path (the private root) or a secret value
// that no output may show.
func redactPath(p string) { procScrub.Add(p) }

// scrubText removes secrets, object IDs, keys and private paths from s.
func scrubText(s string) string { return procScrub.Text(s) }
