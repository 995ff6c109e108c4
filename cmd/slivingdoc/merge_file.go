package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/slivingdoc/slivingdoc/merge"
)

func init() {
	register(command{name: "merge-file", summary: "merge three versions of a file as the notebook does", run: runMergeFile, oneShot: true, ownSignals: true})
}

const mergeFileUsage = `Usage: slivingdoc merge-file [-h] [--strict] <local> <base> <remote>

Merges the changes from <base> to <local> and from <base> to <remote> line
by line, exactly as the notebook merges concurrent edits, and prints the
result on stdout. Nothing is normalised: line endings and bytes are kept.
Overlapping changes are written as conflict blocks:

  <<<<<<< local
  lines from <local>
  =======
  lines from <remote>
  >>>>>>> remote

Lines that both sides only added at the same place are not a conflict: the
result has both, <remote>'s first, and lines both added alike once.

Flags (before or after the files; -- ends them):
  --strict  git's rules: two additions at one place conflict, and the
            output is that of git merge-file -p -L local -L base -L remote
  -h        this help

The files are only read. Exit status: 0 clean merge, 1 conflicts (their
line ranges are listed on stderr), 2 usage or read error, 130 interrupted
while an input that is not a regular file (a FIFO) keeps it waiting.
`

func runMergeFile(ctx context.Context, args []string, s stdio) int {
	strict, files, help, err := parseMergeFileArgs(args)
	switch {
	case help:
		fmt.Fprint(s.out, mergeFileUsage)
		return 0
	case err != nil:
		fmt.Fprintf(s.err, "slivingdoc merge-file: %v\n\n%s", err, mergeFileUsage)
		return 2
	case len(files) != 3:
		fmt.Fprintf(s.err, "slivingdoc merge-file: expected 3 files (local, base, remote), got %d\n\n%s", len(files), mergeFileUsage)
		return 2
	}
	var content [3][]byte
	var code int
	if allRegular(files) {
		content, code = readRegularInputs(files, s)
	} else {
		// A FIFO (or a terminal, a device) may keep the read waiting:
		// SIGINT and SIGTERM must then end it with the interrupted status.
		var stop context.CancelFunc
		ctx, stop = notifyContext(ctx)
		defer stop()
		content, code = readInputs(ctx, files, s)
	}
	if code != 0 {
		return code
	}
	text := merge.Text
	if strict {
		text = merge.TextStrict
	}
	res := text(content[1], content[0], content[2])
	if _, err := s.out.Write(res.Content); err != nil {
		fmt.Fprintf(s.err, "slivingdoc merge-file: write the result: %v\n", err)
		return 2
	}
	if len(res.Conflicts) == 0 {
		return 0
	}
	ranges := make([]string, len(res.Conflicts))
	for i, r := range res.Conflicts {
		ranges[i] = fmt.Sprintf("%d-%d", r.Start, r.End)
	}
	fmt.Fprintf(s.err, "slivingdoc merge-file: %d conflict block(s) at lines %s\n", len(res.Conflicts), strings.Join(ranges, ", "))
	return 1
}

// parseMergeFileArgs reads the flags wherever they are among the files,
// as the other commands do; -h anywhere asks for the help, whatever else
// is wrong with the line.
func parseMergeFileArgs(args []string) (strict bool, files []string, help bool, err error) {
	fset := flag.NewFlagSet("merge-file", flag.ContinueOnError)
	fset.SetOutput(io.Discard)
	fset.BoolVar(&strict, "strict", false, "")
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "-help" || a == "--help" || a == "--h" {
			return false, nil, true, nil
		}
	}
	for {
		if err := fset.Parse(args); err != nil {
			return false, nil, false, err
		}
		rest := fset.Args()
		if len(rest) == 0 {
			return strict, files, false, nil
		}
		if len(rest) < len(args) && args[len(args)-len(rest)-1] == "--" {
			return strict, append(files, rest...), false, nil
		}
		files = append(files, rest[0])
		args = rest[1:]
	}
}

// allRegular reports whether every path names a regular file (through
// symbolic links), which a read never leaves waiting. A path that cannot
// be examined counts as regular: reading it fails at once, with the
// message readInput gives.
func allRegular(paths []string) bool {
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && !fi.Mode().IsRegular() {
			return false
		}
	}
	return true
}

// readRegularInputs reads local, base and remote when all three are
// regular files, which no read leaves waiting: in turn, on the calling
// goroutine, each through readRegular. A file that readRegular cannot read
// (gone or replaced since allRegular looked, unreadable) is read again by
// readInput, whose error is the one reported.
func readRegularInputs(files []string, s stdio) (content [3][]byte, code int) {
	for i, f := range files {
		if b, ok := readRegular(f); ok {
			content[i] = b
			continue
		}
		b, err := readInput(f)
		if err != nil {
			fmt.Fprintf(s.err, "slivingdoc merge-file: %s file %v\n", []string{"local", "base", "remote"}[i], err)
			return content, 2
		}
		content[i] = b
	}
	return content, 0
}

// readInputs reads local, base and remote when one of them may keep a read
// waiting. A file can be a FIFO whose writer never comes; the read then
// waits in its own goroutine, so that SIGINT or SIGTERM (ctx) still ends
// the command.
func readInputs(ctx context.Context, files []string, s stdio) (content [3][]byte, code int) {
	type result struct {
		i   int
		b   []byte
		err error
	}
	done := make(chan result, 3)
	go func() {
		for i, f := range files {
			b, err := readInput(f)
			done <- result{i, b, err}
			if err != nil {
				return
			}
		}
	}()
	for range files {
		select {
		case <-ctx.Done():
			fmt.Fprintf(s.err, "slivingdoc merge-file: interrupted\n")
			return content, exitInterrupted
		case r := <-done:
			if r.err != nil {
				fmt.Fprintf(s.err, "slivingdoc merge-file: %s file %v\n", []string{"local", "base", "remote"}[r.i], r.err)
				return content, 2
			}
			content[r.i] = r.b
		}
	}
	return content, 0
}

// readInput reads one input file, with an error that says what is wrong
// in words rather than as a syscall.
func readInput(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		return b, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%q does not exist", path)
	case errors.Is(err, fs.ErrPermission):
		return nil, fmt.Errorf("%q cannot be read: permission denied", path)
	}
	if fi, serr := os.Stat(path); serr == nil && fi.IsDir() {
		return nil, fmt.Errorf("%q is a directory", path)
	}
	return nil, fmt.Errorf("%q cannot be read: %w", path, err)
}
