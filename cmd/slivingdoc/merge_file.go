package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime/debug"
	"strings"

	"github.com/slivingdoc/slivingdoc/merge"
)

func init() {
	register(command{name: "merge-file", summary: "merge three versions of a file as the notebook does", run: runMergeFile, noGC: true})
}

const mergeFileUsage = `Usage: slivingdoc merge-file [-h] <local> <base> <remote>

Merges the changes from <base> to <local> and from <base> to <remote> line
by line, exactly as the notebook merges concurrent edits, and prints the
result on stdout. Nothing is normalised: line endings and bytes are kept.
Overlapping changes are written as conflict blocks:

  <<<<<<< local
  lines from <local>
  =======
  lines from <remote>
  >>>>>>> remote

The files are only read. Exit status: 0 clean merge, 1 conflicts (their
line ranges are listed on stderr), 2 usage or read error.
`

// mergeFileNoGCLimit is the input size up to which merge-file runs without
// the garbage collector: one merge and the process exits, so collecting is
// wasted work (the merge allocates about 2.5 times its input). main starts
// it with the collector off, before the inputs are read.
const mergeFileNoGCLimit = 64 << 20

func runMergeFile(_ context.Context, args []string, s stdio) int {
	fset := flag.NewFlagSet("merge-file", flag.ContinueOnError)
	fset.SetOutput(io.Discard)
	if err := fset.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(s.out, mergeFileUsage)
			return 0
		}
		fmt.Fprintf(s.err, "slivingdoc merge-file: %v\n\n%s", err, mergeFileUsage)
		return 2
	}
	if fset.NArg() != 3 {
		fmt.Fprintf(s.err, "slivingdoc merge-file: expected 3 files (local, base, remote), got %d\n\n%s", fset.NArg(), mergeFileUsage)
		return 2
	}
	var content [3][]byte
	total := 0
	for i, role := range []string{"local", "base", "remote"} {
		b, err := readInput(fset.Arg(i))
		if err != nil {
			fmt.Fprintf(s.err, "slivingdoc merge-file: %s file %v\n", role, err)
			return 2
		}
		content[i] = b
		total += len(b)
	}
	if total > mergeFileNoGCLimit {
		debug.SetGCPercent(100)
	}
	res := merge.Text(content[1], content[0], content[2])
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
