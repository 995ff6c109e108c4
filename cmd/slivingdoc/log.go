package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"strings"
	"time"

	"github.com/slivingdoc/slivingdoc/server"
	"github.com/slivingdoc/slivingdoc/server/history"
)

func init() {
	register(command{name: "log", summary: "list recent publications", run: runLog, oneShot: true, ownSignals: true})
}

// runLog prints the most recent accepted publications, newest first.
func runLog(ctx context.Context, args []string, s stdio) int {
	c := newCLICommand("log", "log [flags] [-n N]",
		"Lists recent publications, newest first: generation, time (UTC), author, message and\n"+
			"the files each changed (--stat, the default), or with -p their diffs in git's format.\n\n"+
			"Examples:\n"+
			"  slivingdoc log -n 20                 the last 20 publications\n"+
			"  slivingdoc log -p --path notes/a.md  every retained change to notes/a.md, as diffs\n"+
			"  slivingdoc log --since 24h --json    the last day's publications, for a script\n\n"+
			"--since and --until take an RFC 3339 time (2026-11-30T10:00:00Z), a date (2026-11-30,\n"+
			"UTC; --until includes that whole day) or an age (90m, 36h, 7d).\n\n"+
			"--watch keeps going after the recent publications: each new one is printed as it lands,\n"+
			"until Ctrl-C (exit 0). It asks the store whether anything changed every 100 ms, slowing\n"+
			"to once a second while nothing does; with --json, one JSON object per line.", s)
	n := c.fs.Int("n", 10, "show at most `N` publications (1..1000)")
	_ = c.fs.Bool("stat", false, "list the files with +/- counts (the default)")
	patch := c.fs.Bool("p", false, "show each file's changes as a unified diff")
	pathFlag := c.fs.String("path", "", "only publications that changed the file or directory `P`")
	since := c.fs.String("since", "", "only publications at or after `TIME`")
	until := c.fs.String("until", "", "only publications at or before `TIME`")
	asJSON := c.fs.Bool("json", false, "print one JSON array (with -p, each entry has its patch)")
	author := c.fs.String("author", "", "only publications whose author matches `PATTERN`, a regular expression as git's (case-sensitive)")
	watch := c.fs.Bool("watch", false, "then print each new publication as it lands, until interrupted")
	if _, code, done := c.parse(args, 0); done {
		return code
	}
	if *n < 1 || *n > 1000 {
		fmt.Fprintf(s.err, "slivingdoc log: -n %d: want 1..1000\n", *n)
		return 2
	}
	q := history.Query{Limit: *n, Path: *pathFlag, Content: *patch}
	var err error
	now := time.Now()
	if q.Since, err = parseWhen(*since, now, false); err != nil {
		fmt.Fprintf(s.err, "slivingdoc log: --since: %v\n", err)
		return 2
	}
	if q.Until, err = parseWhen(*until, now, true); err != nil {
		fmt.Fprintf(s.err, "slivingdoc log: --until: %v\n", err)
		return 2
	}
	if *author != "" {
		if q.Author, err = regexp.Compile(*author); err != nil {
			fmt.Fprintf(s.err, "slivingdoc log: --author %q: not a regular expression: %v\n", *author, regexpReason(err))
			return 2
		}
	}
	if *watch {
		if *until != "" {
			fmt.Fprintf(s.err, "slivingdoc log: --watch and --until: a watch has no end time\n")
			return 2
		}
		// A watch runs until interrupted, and an interrupt ends it with
		// status 0: it catches the signals (the other reads do not).
		ctx, stop := notifyContext(ctx)
		defer stop()
		return c.storeOnly(ctx, func(e *server.Engine) error {
			return watchLog(ctx, e, q, s.out, *asJSON, *patch)
		})
	}
	return c.storeOnly(ctx, func(e *server.Engine) error {
		entries, err := e.History(ctx, q)
		if err != nil {
			return err
		}
		switch {
		case *asJSON:
			return printLogJSON(s.out, entries, *patch)
		case *patch:
			printLogPatch(s.out, entries)
		default:
			printLog(s.out, entries)
		}
		return nil
	})
}

// logWorkspace is the workspace root log gives the engine, which needs one
// though log reads no directory: the working directory, unless the private
// root lies inside it (say, the home directory), which the engine refuses;
// then a sibling path of the private root (neither inside it nor holding
// it, both of which the engine refuses), which is never read or created.
func logWorkspace(priv string) string {
	wd, err := os.Getwd()
	if err != nil || wd == priv || strings.HasPrefix(priv, strings.TrimSuffix(wd, string(filepath.Separator))+string(filepath.Separator)) {
		return filepath.Join(filepath.Dir(priv), filepath.Base(priv)+".log-workspace")
	}
	return wd
}

// printLog prints each entry as
//
//	generation 7  2026-11-30T10:20:20Z  by claude-code 2.1.0 (ana@build-7)
//	    the message, every line indented
//	  notes/a.md  +1 -0
//	  1 file changed, 1 insertion(+), 0 deletions(-)
//
// with a blank line between entries. "by AUTHOR" is left out when the
// store recorded no author: a placeholder word there could be taken for
// a name.
func printLog(w io.Writer, entries []history.Entry) {
	p := colourFor(w)
	for i, en := range entries {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s  %s", p.paint(ansiYel, fmt.Sprintf("generation %d", en.Generation)), en.Time.UTC().Format(time.RFC3339))
		if en.Author != "" {
			fmt.Fprintf(w, "  by %s", safeText(en.Author)) // claimed by any writer: never raw to a terminal
		}
		fmt.Fprintln(w)
		for _, l := range strings.Split(strings.TrimRight(en.Message, "\n"), "\n") {
			fmt.Fprintf(w, "    %s\n", safeText(l))
		}
		ins, del := 0, 0
		for _, f := range en.Files {
			fmt.Fprintf(w, "  %s  %s %s\n", safeText(f.Path), p.paint(ansiGreen, fmt.Sprintf("+%d", f.Insertions)), p.paint(ansiRed, fmt.Sprintf("-%d", f.Deletions)))
			ins += f.Insertions
			del += f.Deletions
		}
		fmt.Fprintf(w, "  %s\n", totals(len(en.Files), ins, del))
	}
}

// regexpReason is the part of a regexp error that says what is wrong (the
// pattern is quoted once already).
func regexpReason(err error) string {
	var se *syntax.Error
	if errors.As(err, &se) {
		return string(se.Code)
	}
	return err.Error()
}
