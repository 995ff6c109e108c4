package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/slivingdoc/slivingdoc/server"
)

func init() {
	register(command{name: "restore", summary: "write a generation's files into the directory, to commit", run: runRestore, oneShot: true, armedSignals: true})
}

// runRestore writes generation N's content for the paths (or the whole
// notebook) into the directory as a local edit; nothing is published.
func runRestore(ctx context.Context, args []string, s stdio) int {
	c := newCLICommand("restore", "restore [flags] DIR --generation N [PATH...]",
		"Writes the content of generation N into the notebook directory DIR as a local edit: the\n"+
			"files named by PATH (files or directories, relative to DIR; none: all of DIR) become as\n"+
			"they were at N, re-created if they were deleted since, removed if they did not exist at\n"+
			"N. Other files are untouched; DIR may be a subdirectory of a notebook directory, and then\n"+
			"only it changes. Nothing is published: review the change with 'slivingdoc diff DIR',\n"+
			"then commit it; the commit merges it with later publications as any edit, so history is\n"+
			"never rewritten. DIR must have been pulled. An empty PATH is refused.\n\n"+
			"Uncommitted work is never lost: when a file the restore would overwrite or delete was\n"+
			"edited since the last pull or commit, or never committed, nothing is changed and the\n"+
			"files are named (UNCOMMITTED_CHANGES). --force goes ahead after keeping a copy of each\n"+
			"in the private state, and prints where.\n\n"+
			"Examples:\n"+
			"  slivingdoc restore notes --generation 41 plan.md    bring back plan.md as of 41\n"+
			"  slivingdoc restore notes --generation 41            the whole notebook as of 41\n"+
			"  slivingdoc commit notes -m 'restore plan.md from generation 41'", s)
	gen := c.fs.Uint64("generation", 0, "the generation `N` to restore from (required)")
	force := c.fs.Bool("force", false, "replace files holding uncommitted work, after keeping a copy of each")
	pos, code, done := c.parse(args, 1<<16)
	if done {
		return code
	}
	if !flagSet(c, "generation") || len(pos) == 0 {
		fmt.Fprintf(s.err, "slivingdoc restore: want DIR and --generation N\nRun 'slivingdoc restore -h' for the reference.\n")
		return 2
	}
	return c.inDir(ctx, pos[:1], false, func(e *server.Engine, dir string) error {
		res, err := e.Restore(ctx, dir, *gen, pos[1:], server.HistoryWrite{Force: *force})
		if err == nil {
			printLocalEdit(s.out, "restored", res)
		}
		return err
	})
}

// flagSet reports whether the flag was given on the command line.
func flagSet(c *cliCommand, name string) bool {
	set := false
	c.fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}

// printLocalEdit prints a restore or revert result:
//
//	OK  restored generation 41 (not published: review, then commit)
//	plan.md  +12 -3
//	1 file changed, 12 insertions(+), 3 deletions(-)
//	saved 1 file with uncommitted work in /home/me/.local/state/slivingdoc/dirs/.../saved/20261206T031500.123456789Z:
//	  plan.md
func printLocalEdit(w io.Writer, verb string, r *server.LocalEditResult) {
	p := colourFor(w)
	fmt.Fprintf(w, "%s  %s generation %d (not published: review, then commit)\n", p.paint(ansiGreen+ansiBold, "OK"), verb, r.Generation)
	ins, del := 0, 0
	for _, f := range r.Files {
		fmt.Fprintf(w, "%s  %s %s\n", safeText(f.Path), p.paint(ansiGreen, fmt.Sprintf("+%d", f.Insertions)), p.paint(ansiRed, fmt.Sprintf("-%d", f.Deletions)))
		ins += f.Insertions
		del += f.Deletions
	}
	fmt.Fprintln(w, totals(len(r.Files), ins, del))
	printSaved(w, r)
}

// printSaved names the copies --force kept, if any.
func printSaved(w io.Writer, r *server.LocalEditResult) {
	if r.Saved != "" {
		fmt.Fprintf(w, "saved %d %s with uncommitted work in %s:\n", len(r.SavedFiles), plural(len(r.SavedFiles), "file", "files"), safeText(r.Saved))
		for _, f := range r.SavedFiles {
			fmt.Fprintf(w, "  %s\n", safeText(f))
		}
	}
}
