package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/slivingdoc/slivingdoc/server"
)

func init() {
	register(command{name: "log", summary: "list recent publications", run: runLog})
}

// runLog prints the most recent accepted publications, newest first.
func runLog(ctx context.Context, args []string, s stdio) int {
	c := newCLICommand("log", "log [flags] [-n N]",
		"Lists recent accepted publications of the notebook, newest first: generation, time (UTC),\n"+
			"message and the files each one changed.", s)
	n := c.fs.Int("n", 10, "show at most `N` publications (1..1000)")
	if _, code, done := c.parse(args, 0); done {
		return code
	}
	if *n < 1 || *n > 1000 {
		fmt.Fprintf(s.err, "slivingdoc log: -n %d: want 1..1000\n", *n)
		return 2
	}
	cfg, code, done := c.config(ctx)
	if done {
		return code
	}
	e, code, done := c.start(&cfg, logWorkspace(cfg.PrivateRoot))
	if done {
		return code
	}
	defer e.Close()
	entries, err := e.Log(ctx, *n)
	if err != nil {
		return c.fail(e, cfg, err)
	}
	printLog(s.out, entries)
	return 0
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
//	generation 7  2026-11-30T10:20:20Z
//	    the message, every line indented
//	  notes/a.md  +1 -0
//	  1 file changed, 1 insertion(+), 0 deletions(-)
//
// with a blank line between entries.
func printLog(w io.Writer, entries []server.LogEntry) {
	p := colourFor(w)
	for i, en := range entries {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s  %s\n", p.paint(ansiYel, fmt.Sprintf("generation %d", en.Generation)), en.Time.UTC().Format(time.RFC3339))
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
