package main

// Output of pull, commit, status and log: the result lines of DESIGN §8,
// the candid error report (the same fields and order as the MCP error's
// text item), and colour only for a terminal without NO_COLOR.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"unicode"

	"github.com/slivingdoc/slivingdoc/server"
)

// painter colours text when enabled.
type painter struct{ on bool }

const (
	ansiReset = "\x1b[0m"
	ansiBold  = "\x1b[1m"
	ansiRed   = "\x1b[31m"
	ansiGreen = "\x1b[32m"
	ansiYel   = "\x1b[33m"
)

func (p painter) paint(code, s string) string {
	if !p.on || s == "" {
		return s
	}
	return code + s + ansiReset
}

// colourFor decides colour for w: only a terminal, never with a non-empty
// NO_COLOR (https://no-color.org), never with TERM=dumb.
func colourFor(w io.Writer) painter {
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return painter{}
	}
	f, ok := w.(*os.File)
	if !ok {
		return painter{}
	}
	fi, err := f.Stat()
	return painter{on: err == nil && fi.Mode()&os.ModeCharDevice != 0}
}

// printResult prints a pull or commit result:
//
//	OK  generation 18
//	notes/a.md  +1 -1
//	3 files changed, 3 insertions(+), 4 deletions(-)
func printResult(w io.Writer, r *server.Result) {
	p := colourFor(w)
	fmt.Fprintf(w, "%s  generation %d\n", p.paint(ansiGreen+ansiBold, "OK"), r.Generation)
	ins, del := 0, 0
	for _, f := range r.Files {
		fmt.Fprintf(w, "%s  %s %s\n", safeText(f.Path), p.paint(ansiGreen, fmt.Sprintf("+%d", f.Insertions)), p.paint(ansiRed, fmt.Sprintf("-%d", f.Deletions)))
		ins += f.Insertions
		del += f.Deletions
	}
	fmt.Fprintln(w, totals(len(r.Files), ins, del))
}

// totals is the diffstat trailer, in git's words.
func totals(files, ins, del int) string {
	return fmt.Sprintf("%d %s changed, %d %s(+), %d %s(-)",
		files, plural(files, "file", "files"), ins, plural(ins, "insertion", "insertions"), del, plural(del, "deletion", "deletions"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// reportError prints err as the candid report on w and returns the exit
// code: 1 for a domain error, 2 for a usage error. The cause of a domain
// error goes to the log only, under the report's diagnosticId.
func reportError(w io.Writer, log *slog.Logger, op string, err error, writable, readOnly []string) int {
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(w, "slivingdoc %s: %s\n", op, ue.msg)
		return 2
	}
	var de *server.Error
	if !errors.As(err, &de) {
		// Not classified by the engine: never show its text (it may hold
		// private paths or keys); the log has it under the diagnosticId.
		de = &server.Error{Code: server.CodeEngineFailed, Reason: server.ReasonInternal, Action: server.ActionCheckHost,
			Message: "The operation failed unexpectedly; the log record with the diagnosticId has the cause.", Cause: err}
	}
	id := diagnosticID()
	if log != nil {
		attrs := []any{"module", "cli", "op", op, "diagnosticId", id, "code", string(de.Code), "reason", de.Reason}
		if de.Cause != nil {
			attrs = append(attrs, "cause", de.Cause.Error())
		}
		log.Log(context.Background(), logLevelFor(de.Code), "operation failed", attrs...)
	}
	p := colourFor(w)
	fmt.Fprintf(w, "%s · %s\n", p.paint(ansiRed+ansiBold, string(de.Code)), de.Reason)
	fmt.Fprintln(w, safeText(de.Message))
	if de.Detail != "" {
		fmt.Fprintf(w, "detail: %s\n", safeText(de.Detail))
	}
	for _, f := range de.Files {
		line := "file: " + p.paint(ansiYel, safeText(f.Path)) + " · " + f.Reason
		if len(f.Ranges) > 0 {
			rs := make([]string, len(f.Ranges))
			for i, r := range f.Ranges {
				rs[i] = fmt.Sprintf("%d-%d", r.Start, r.End)
			}
			line += " · lines " + strings.Join(rs, ", ")
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintf(w, "action: %s\n", de.Action)
	fmt.Fprintf(w, "retryable: %t\n", de.Retryable)
	fmt.Fprintf(w, "diagnosticId: %s\n", id)
	if r := de.Recovery; r != nil {
		fmt.Fprintf(w, "recovery: stage %s · remoteAccepted %s · resynchronized %t\n", r.Stage, r.RemoteAccepted, r.Resynchronized)
	}
	if len(writable) > 0 {
		fmt.Fprintf(w, "writable: %s\n", safeText(strings.Join(writable, ", ")))
	}
	if len(readOnly) > 0 {
		fmt.Fprintf(w, "read-only: %s\n", safeText(strings.Join(readOnly, ", ")))
	}
	return 1
}

// logLevelFor keeps stderr quiet for outcomes the report fully explains
// (the user fixes the request, the files or the conflict) and logs store,
// engine and recovery failures, whose cause is only in the log, as errors.
func logLevelFor(c server.Code) slog.Level {
	switch c {
	case server.CodeInvalidRequest, server.CodeInvalidContent, server.CodeContentConflict, server.CodeReadOnlyPath:
		return slog.LevelDebug
	case server.CodeRemoteBusy:
		return slog.LevelWarn
	}
	return slog.LevelError
}

// diagnosticID is 16 lowercase hex characters, fresh per report.
func diagnosticID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// safeText replaces control characters (other than tab) so that a file
// name or message written by someone else cannot drive the terminal.
func safeText(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return r != '\t' && unicode.IsControl(r) }) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if r != '\t' && unicode.IsControl(r) {
			fmt.Fprintf(&b, "\\x%02x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
