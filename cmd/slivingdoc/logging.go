package main

// Contract owned by the CLI work: the process logger. Structured key=value
// records on stderr; LOG_LEVEL sets the level, with per-module overrides.

import (
	"io"
	"log/slog"
)

// newLogger returns the process logger writing to w.
func newLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
}
