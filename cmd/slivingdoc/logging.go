package main

// The process logger: key=value records on stderr (slog's text format).
//
// LOG_LEVEL sets the level: a default and per-module overrides, for example
// "info,remote=debug" or "warn". A record's module is the "module"
// attribute its logger carries (logger.With("module", "remote")); records
// without one use the default. Levels: debug, info, warn, error.
//
// Defence in depth for the "no secrets" rule: records at info and above
// pass through a scrubber that replaces object IDs (40/64 hex), pack and
// probe keys, AWS access key IDs, URL user info and the registered private
// paths. Debug records are for the operator's own machine and are not
// scrubbed.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
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
		r = scrubRecord(r)
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
		attrs[i] = scrubAttr(a)
	}
	n.inner = h.inner.WithAttrs(attrs)
	return &n
}

func (h *moduleHandler) WithGroup(name string) slog.Handler {
	n := *h
	n.inner = h.inner.WithGroup(name)
	return &n
}

func scrubRecord(r slog.Record) slog.Record {
	out := slog.NewRecord(r.Time, r.Level, scrubText(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(scrubAttr(a))
		return true
	})
	return out
}

func scrubAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, scrubText(v.String()))
	case slog.KindGroup:
		g := v.Group()
		out := make([]any, len(g))
		for i, x := range g {
			out[i] = scrubAttr(x)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, scrubText(err.Error()))
		}
		if st, ok := v.Any().(fmt.Stringer); ok {
			return slog.String(a.Key, scrubText(st.String()))
		}
		return slog.String(a.Key, scrubText(fmt.Sprint(v.Any())))
	}
	return slog.Attr{Key: a.Key, Value: v}
}

var scrubPatterns = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`packs/(?:checkpoints|increments)/[^\s"']+`), "<pack-key>"},
	{regexp.MustCompile(`probe/[0-9A-Fa-f-]{8,}`), "<probe-key>"},
	{regexp.MustCompile(`\b(?:[0-9a-fA-F]{64}|[0-9a-fA-F]{40})\b`), "<id>"},
	{regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`), "<access-key>"},
	{regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://)[^/\s@]+@`), "${1}<user>@"},
}

// credentialEnv are variables whose values no record and no MCP result may
// show (serve passes them to the adapter's redaction too).
var credentialEnv = []string{"AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN"}

var (
	redactMu    sync.RWMutex
	redactPaths []string // longest first
)

// redactPath registers a private path (the private root) or a secret value
// that records at info and above must never show.
func redactPath(p string) {
	if len(p) < 2 {
		return
	}
	redactMu.Lock()
	defer redactMu.Unlock()
	for _, q := range redactPaths {
		if q == p {
			return
		}
	}
	redactPaths = append(redactPaths, p)
	sort.Slice(redactPaths, func(i, j int) bool { return len(redactPaths[i]) > len(redactPaths[j]) })
}

// scrubText removes secrets, object IDs, keys and private paths from s.
func scrubText(s string) string {
	redactMu.RLock()
	for _, p := range redactPaths {
		s = strings.ReplaceAll(s, p, "<private>")
	}
	redactMu.RUnlock()
	for _, p := range scrubPatterns {
		s = p.re.ReplaceAllString(s, p.with)
	}
	return s
}
