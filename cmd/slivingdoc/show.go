package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/slivingdoc/slivingdoc/server"
	"github.com/slivingdoc/slivingdoc/server/history"
)

func init() {
	register(command{name: "show", summary: "show one publication's changes, or a file as it was", run: runShow, oneShot: true, ownSignals: true})
}

// runShow prints publication GEN (header as in log, then its patch), or
// with GEN:PATH the file's content at GEN, raw.
func runShow(ctx context.Context, args []string, s stdio) int {
	c := newCLICommand("show", "show [flags] GEN | GEN:PATH | -N",
		"With GEN: the publication accepted at generation GEN, as log prints it (time, message,\n"+
			"files), then its changes as a unified diff in git's format. With GEN:PATH: the content\n"+
			"of the file PATH (notebook-relative) at generation GEN, byte for byte on stdout.\n"+
			"With -N (or -n N) and no GEN: the N most recent publications, each with its changes.\n\n"+
			"Examples:\n"+
			"  slivingdoc show 42                     what generation 42 changed\n"+
			"  slivingdoc show -1                     what the latest publication changed\n"+
			"  slivingdoc show 41:notes/plan.md       notes/plan.md as it was at generation 41\n"+
			"  slivingdoc show 41:notes/plan.md > plan.md", s)
	pathFlag := c.fs.String("path", "", "with GEN: only the file or directory `P`")
	n := c.fs.Int("n", 0, "with no GEN: the `N` most recent publications (1..1000; -N works too)")
	pos, code, done := c.parse(args, 1)
	if done {
		return code
	}
	if len(pos) == 0 && *n != 0 {
		if *n < 1 || *n > 1000 {
			fmt.Fprintf(s.err, "slivingdoc show: -n %d: want 1..1000\n", *n)
			return 2
		}
		return c.storeOnly(ctx, func(e *server.Engine) error {
			entries, err := e.History(ctx, history.Query{Limit: *n, Path: *pathFlag, Content: true})
			if err == nil {
				printLogPatch(s.out, entries)
			}
			return err
		})
	}
	if len(pos) != 1 || *n != 0 {
		fmt.Fprintf(s.err, "slivingdoc show: want GEN, GEN:PATH or -N\nRun 'slivingdoc show -h' for the reference.\n")
		return 2
	}
	genText, file, hasFile := strings.Cut(pos[0], ":")
	gen, err := strconv.ParseUint(genText, 10, 64)
	if err != nil {
		fmt.Fprintf(s.err, "slivingdoc show: %q is not a generation\n", genText)
		return 2
	}
	return c.storeOnly(ctx, func(e *server.Engine) error {
		if hasFile {
			content, err := e.FileAt(ctx, gen, file)
			if err == nil {
				_, err = s.out.Write(content)
			}
			return err
		}
		en, err := e.Show(ctx, gen, *pathFlag)
		if err != nil {
			return err
		}
		if en.Time.IsZero() {
			fmt.Fprintf(s.out, "generation %d published nothing (a checkpoint of the store)\n", gen)
			return nil
		}
		printLogPatch(s.out, []history.Entry{*en})
		return nil
	})
}
