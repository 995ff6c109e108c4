package main

import (
	"context"
	"fmt"
	"io"
	"sort"

	"github.com/slivingdoc/slivingdoc/server"
)

func init() {
	register(command{name: "status", summary: "show local changes and whether the notebook moved", run: runStatus, oneShot: true, ownSignals: true})
}

// runStatus lists files added, modified and deleted against the baseline
// and whether the accepted notebook moved since; it publishes nothing.
func runStatus(ctx context.Context, args []string, s stdio) int {
	c := newCLICommand("status", "status [flags] [path]",
		"Lists the directory's changes against its baseline (A added, M modified, D deleted)\n"+
			"and whether the accepted notebook moved since the last pull or commit. Publishes and\n"+
			"writes nothing. With --ignored, also lists the files the ignore rules leave out (! path).", s)
	ignored := c.fs.Bool("ignored", false, "also list files the ignore rules leave out of the notebook")
	pos, code, done := c.parse(args, 1)
	if done {
		return code
	}
	return c.inDir(ctx, pos, false, func(e *server.Engine, dir string) error {
		st, err := e.Status(ctx, dir)
		if err == nil {
			printStatus(s.out, st, *ignored)
		}
		return err
	})
}

// printStatus prints
//
//	generation 5, notebook at generation 7: pull to update
//	A  new.md
//	M  notes/a.md
//	D  old.md
//	!  .DS_Store          (with --ignored)
func printStatus(w io.Writer, st *server.Status, ignored bool) {
	p := colourFor(w)
	switch {
	case st.Generation == st.BaseGeneration:
		fmt.Fprintf(w, "generation %d, notebook unchanged\n", st.BaseGeneration)
	default:
		fmt.Fprintf(w, "generation %d, %s: pull to update\n", st.BaseGeneration, p.paint(ansiYel, fmt.Sprintf("notebook at generation %d", st.Generation)))
	}
	type line struct{ mark, path string }
	var lines []line
	for _, f := range st.Added {
		lines = append(lines, line{p.paint(ansiGreen, "A"), f})
	}
	for _, f := range st.Modified {
		lines = append(lines, line{p.paint(ansiYel, "M"), f})
	}
	for _, f := range st.Deleted {
		lines = append(lines, line{p.paint(ansiRed, "D"), f})
	}
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].path < lines[j].path })
	for _, l := range lines {
		fmt.Fprintf(w, "%s  %s\n", l.mark, safeText(l.path))
	}
	if len(lines) == 0 {
		fmt.Fprintln(w, "no local changes")
	}
	if ignored {
		for _, f := range st.Ignored {
			fmt.Fprintf(w, "%s  %s\n", "!", safeText(f))
		}
	}
}
