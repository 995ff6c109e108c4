package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/slivingdoc/slivingdoc/internal/interrupt"
	"github.com/slivingdoc/slivingdoc/server"
)

func init() {
	register(command{name: "commit", summary: "publish a directory's changes", run: runCommit, oneShot: true, armedSignals: true})
}

// maxMessageFile bounds -F input; the engine enforces the real limit
// (16,384 bytes) with its own error, so read a little more than that.
const maxMessageFile = 1 << 20

// runCommit publishes the directory's changes with a message (-m, or -F
// file, "-" for standard input) and incorporates concurrent changes.
func runCommit(ctx context.Context, args []string, s stdio) int {
	c := newCLICommand("commit", "commit [flags] [path] -m <message>",
		"Publishes the changes in the directory (default: the working directory) since its last\n"+
			"pull or commit, and incorporates concurrent non-conflicting changes. The directory must\n"+
			"have been pulled. Overlapping concurrent changes become conflict blocks (exit 1);\n"+
			"resolve them and commit again.", s)
	msg := c.fs.String("m", "", "the commit message (non-blank UTF-8 without U+0000, at most 16,384 bytes)")
	msgFile := c.fs.String("F", "", "read the commit message from `file` (\"-\": standard input)")
	af := addAuthorFlag(c.fs)
	rf := addResultFlags(c.fs)
	pos, code, done := c.parse(args, 1)
	if done {
		return code
	}
	view, code, done := c.resultView(rf)
	if done {
		return code
	}
	given := map[string]bool{}
	c.fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	switch {
	case given["m"] && given["F"]:
		fmt.Fprintf(s.err, "slivingdoc commit: give -m or -F, not both\n")
		return 2
	case !given["m"] && !given["F"]:
		fmt.Fprintf(s.err, "slivingdoc commit: a message is required: -m <message> or -F <file>\n")
		return 2
	case given["F"]:
		if *msgFile == "-" || !allRegular([]string{*msgFile}) {
			// A FIFO, a terminal or standard input may keep the read
			// waiting: an interrupt must then end it, with status 130.
			interrupt.Arm(ctx)
		}
		b, err := readMessageFileCtx(ctx, *msgFile, s.in)
		if errors.Is(err, context.Canceled) {
			fmt.Fprintf(s.err, "slivingdoc commit: interrupted\n")
			return exitInterrupted
		}
		if err != nil {
			fmt.Fprintf(s.err, "slivingdoc commit: -F: %v\n", err)
			return 2
		}
		*msg = string(b)
	}
	ctx = server.WithAuthor(ctx, af.processClaim().Text())
	return c.inDir(ctx, pos, false, func(e *server.Engine, dir string) error {
		res, err := e.Commit(ctx, dir, *msg)
		if err == nil {
			printResultAs(s.out, res, view)
		}
		return err
	})
}

// readMessageFileCtx is readMessageFile, given up when ctx ends (SIGINT,
// SIGTERM): a FIFO or a terminal with no writer blocks the read for ever.
func readMessageFileCtx(ctx context.Context, name string, stdin io.Reader) ([]byte, error) {
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := readMessageFile(name, stdin)
		done <- result{b, err}
	}()
	select {
	case r := <-done:
		return r.b, r.err
	case <-ctx.Done():
		return nil, context.Canceled // the reader stays blocked; the process exits
	}
}

func readMessageFile(name string, stdin io.Reader) ([]byte, error) {
	var r io.Reader
	if name == "-" {
		r = stdin
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	return io.ReadAll(io.LimitReader(r, maxMessageFile))
}
