package main

import (
	"context"

	"github.com/slivingdoc/slivingdoc/server"
)

func init() {
	register(command{name: "pull", summary: "write the current notebook into a directory", run: runPull, oneShot: true, armedSignals: true})
}

// runPull merges the accepted notebook into the directory (default: the
// working directory, created when missing) and records it as the baseline.
func runPull(ctx context.Context, args []string, s stdio) int {
	c := newCLICommand("pull", "pull [flags] [path]",
		"Writes the merge of the directory's baseline, its files and the accepted notebook into\n"+
			"the directory (created when missing) and records the accepted state. Never publishes.\n"+
			"Concurrent changes that overlap local edits become conflict blocks (exit 1).", s)
	rf := addResultFlags(c.fs)
	pos, code, done := c.parse(args, 1)
	if done {
		return code
	}
	view, code, done := c.resultView(rf)
	if done {
		return code
	}
	return c.inDir(ctx, pos, true, func(e *server.Engine, dir string) error {
		pull := e.Pull
		if len(pos) == 0 {
			pull = e.PullImplied // the directory was implied, not named
		}
		res, err := pull(ctx, dir)
		if err == nil {
			printResultAs(s.out, res, view)
		}
		return err
	})
}
