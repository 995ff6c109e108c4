package main

// Output of pull, commit, status and log: the result lines of DESIGN §8,
// the candid error report (server/diag's rendering, the MCP error's text
// item with colour and terminal-safe text), and colour only for a terminal
// without NO_COLOR.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/slivingdoc/slivingdoc/server"
	"github.com/slivingdoc/slivingdoc/server/diag"
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
	if u, ok := w.(interface{ Unwrap() io.Writer }); ok {
		w = u.Unwrap() // a writer that wraps the output (log --watch's)
	}
	f, ok := w.(*os.File)
	if !ok {
		return painter{}
	}
	fi, err := f.Stat()
	return painter{on: err == nil && fi.Mode()&os.ModeCharDevice != 0}
}

// resultView is how much of a result the terminal shows. The result itself
// (what the MCP tool returns) is never shortened; only this view of it.
type resultView int

const (
	viewFull    resultView = iota // every file line
	viewSummary                   // the first summaryHead file lines, then "... and N more files"
	viewQuiet                     // the OK line and the totals
)

// A result of more than summaryAbove files is summarised on a terminal: a
// first commit of thousands of files would otherwise scroll them all by.
const (
	summaryAbove = 20
	summaryHead  = 10
)

// resultFlags are pull's and commit's --stat and --quiet.
type resultFlags struct{ stat, quiet *bool }

func addResultFlags(fs *flag.FlagSet) resultFlags {
	return resultFlags{
		stat:  fs.Bool("stat", false, fmt.Sprintf("list every changed file, even on a terminal (where more than %d are summarised)", summaryAbove)),
		quiet: fs.Bool("quiet", false, "print only the generation and the totals, no file lines"),
	}
}

// view decides the view for w: --quiet, --stat, or by default every file
// when w is not a terminal (a pipe or a file gets the whole result) and a
// summary of a long list on a terminal. Both flags is a usage error.
func (f resultFlags) view(w io.Writer) (resultView, error) {
	switch {
	case *f.stat && *f.quiet:
		return 0, usageErrorf("--stat and --quiet exclude each other")
	case *f.quiet:
		return viewQuiet, nil
	case *f.stat || !isTerminal(w):
		return viewFull, nil
	}
	return viewSummary, nil
}

// printResultAs prints a pull or commit result (viewFull shown):
//
//	OK  generation 18
//	notes/a.md  +1 -1
//	3 files changed, 3 insertions(+), 4 deletions(-)
func printResultAs(w io.Writer, r *server.Result, view resultView) {
	p := colourFor(w)
	fmt.Fprintf(w, "%s  generation %d\n", p.paint(ansiGreen+ansiBold, "OK"), r.Generation)
	printStats(w, r.Files, view, p)
	// A commit's own section: what it wrote into the directory from others'
	// concurrent changes (the result above is the tool's: what it published).
	if len(r.BroughtIn) > 0 && view != viewQuiet {
		fmt.Fprintln(w, "\nbrought in from others:")
		printStats(w, r.BroughtIn, view, p)
	}
}

// printStats prints one line per file (all, the first few, or none, as
// view says) and the totals trailer.
func printStats(w io.Writer, files []server.FileStat, view resultView, p painter) {
	ins, del := 0, 0
	for i, f := range files {
		ins += f.Insertions
		del += f.Deletions
		if view == viewQuiet || (view == viewSummary && len(files) > summaryAbove && i >= summaryHead) {
			continue
		}
		fmt.Fprintf(w, "%s  %s %s\n", safeText(f.Path), p.paint(ansiGreen, fmt.Sprintf("+%d", f.Insertions)), p.paint(ansiRed, fmt.Sprintf("-%d", f.Deletions)))
	}
	if view == viewSummary && len(files) > summaryAbove {
		more := len(files) - summaryHead
		fmt.Fprintf(w, "... and %d more %s (--stat lists them all)\n", more, plural(more, "file", "files"))
	}
	fmt.Fprintln(w, totals(len(files), ins, del))
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
	var de *diag.Error
	if !errors.As(err, &de) {
		// Not classified by the engine: never show its text (it may hold
		// private paths or keys); the log has it under the diagnosticId.
		de = diag.Internal(err)
	}
	id := diag.NewID()
	if log != nil {
		attrs := []any{"module", "cli", "op", op, "diagnosticId", id, "code", string(de.Code), "reason", de.Reason}
		if de.Cause != nil {
			attrs = append(attrs, "cause", de.Cause.Error())
		}
		log.Log(context.Background(), logLevelFor(de.Code), "operation failed", attrs...)
	}
	p := colourFor(w)
	env := diag.NewEnvelope(de, id, writable, readOnly, procScrub)
	fmt.Fprintln(w, env.Text(diag.Style{
		Code: func(s string) string { return p.paint(ansiRed+ansiBold, s) },
		Path: func(s string) string { return p.paint(ansiYel, s) },
		Safe: safeText,
	}))
	return 1
}

// logLevelFor keeps stderr quiet for outcomes the report fully explains
// (the user fixes the request, the files or the conflict) and logs store,
// engine and recovery failures, whose cause is only in the log, as errors.
func logLevelFor(c diag.Code) slog.Level {
	switch c {
	case diag.CodeInvalidRequest, diag.CodeInvalidContent, diag.CodeContentConflict, diag.CodeReadOnlyPath:
		return slog.LevelDebug
	case diag.CodeRemoteBusy:
		return slog.LevelWarn
	}
	return slog.LevelError
}

// safeText makes text written by someone else (a file name, a message)
// safe to print on a terminal (diag.TerminalSafe).
func safeText(s string) string { return diag.TerminalSafe(s) }
