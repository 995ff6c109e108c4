package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/slivingdoc/slivingdoc/server"
)

func init() {
	register(command{name: "revert", summary: "undo one publication in the directory, keeping later work", run: runRevert, oneShot: true, armedSignals: true})
}

// runRevert merges the inverse of publication GEN into the directory.
func runRevert(ctx context.Context, args []string, s stdio) int {
	c := newCLICommand("revert", "revert [flags] DIR GEN  (or DIR --generation GEN, as restore takes it)",
		"Undoes publication GEN in the notebook directory DIR, keeping everything published after\n"+
			"it: a three-way merge with base = the tree GEN published, local = DIR, remote = the tree\n"+
			"before GEN. Where later changes overlap what GEN changed, conflict blocks are written\n"+
			"(<<<<<<< local is the later text, >>>>>>> remote the text before GEN) and the report lists\n"+
			"their line ranges (exit 1), as a pull does. Nothing is published: review with\n"+
			"'slivingdoc diff DIR', resolve any blocks, then commit. DIR must have been pulled at or\n"+
			"after GEN; given a subdirectory of a notebook directory, only the files below it change.\n\n"+
			"Uncommitted work is never lost: when a file the revert would rewrite or delete was\n"+
			"edited since the last pull or commit, or never committed, nothing is changed and the\n"+
			"files are named (UNCOMMITTED_CHANGES). --force goes ahead after keeping a copy of each\n"+
			"in the private state, and prints where.\n\n"+
			"Examples:\n"+
			"  slivingdoc log --path notes/plan.md     find the bad publication\n"+
			"  slivingdoc revert notes 42\n"+
			"  slivingdoc commit notes -m 'revert generation 42'", s)
	force := c.fs.Bool("force", false, "rewrite files holding uncommitted work, after keeping a copy of each")
	genFlag := c.fs.Uint64("generation", 0, "the publication `GEN` to undo, instead of the second argument")
	pos, code, done := c.parse(args, 2)
	if done {
		return code
	}
	// GEN comes as the second argument or as --generation (restore's
	// form), never both: two numbers would leave the user unsure which ran.
	byFlag := flagSet(c, "generation")
	if byFlag && len(pos) == 1 {
		pos = append(pos, strconv.FormatUint(*genFlag, 10))
	} else if byFlag || len(pos) != 2 {
		fmt.Fprintf(s.err, "slivingdoc revert: want DIR GEN, or DIR --generation GEN\nRun 'slivingdoc revert -h' for the reference.\n")
		return 2
	}
	gen, err := strconv.ParseUint(pos[1], 10, 64)
	if err != nil {
		fmt.Fprintf(s.err, "slivingdoc revert: %q is not a generation\n", pos[1])
		return 2
	}
	return c.inDir(ctx, pos[:1], false, func(e *server.Engine, dir string) error {
		res, err := e.Revert(ctx, dir, gen, server.HistoryWrite{Force: *force})
		switch {
		case err == nil:
			printLocalEdit(s.out, "reverted", res)
		case res != nil:
			// Conflict blocks were written: stdout carries the report,
			// stderr where the copies of replaced files are.
			printSaved(s.err, res)
		}
		return err
	})
}
