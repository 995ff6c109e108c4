package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/slivingdoc/slivingdoc/merge"
	"github.com/slivingdoc/slivingdoc/server"
	"github.com/slivingdoc/slivingdoc/server/history"
)

func init() {
	register(command{name: "diff", summary: "show changes: local edits, or between two generations", run: runDiff, oneShot: true, ownSignals: true})
}

// runDiff prints a unified diff: with no generation, the directory's
// baseline against what is on disk (what the next commit would publish);
// with one, that generation against the accepted head; with two, the first
// against the second.
func runDiff(ctx context.Context, args []string, s stdio) int {
	c := newCLICommand("diff", "diff [flags] [GEN1 [GEN2] | DIR]",
		"Prints the changes as a unified diff in git's format (patch -p1 and git apply take it).\n"+
			"With no generation: the directory's changes against its baseline, what the next commit\n"+
			"would publish (DIR, default the working directory). With GEN1: from generation GEN1 to\n"+
			"the accepted notebook. With GEN1 GEN2: from GEN1 to GEN2. Publishes and writes nothing.\n\n"+
			"Examples:\n"+
			"  slivingdoc diff                     local edits not committed yet\n"+
			"  slivingdoc diff 41                  everything accepted since generation 41\n"+
			"  slivingdoc diff 41 44 --path notes  generations 41 to 44, files under notes/ only", s)
	pathFlag := c.fs.String("path", "", "only the file or directory `P` (notebook-relative)")
	stat := c.fs.Bool("stat", false, "print the files with +/- counts instead of the diff")
	pos, code, done := c.parse(args, 2)
	if done {
		return code
	}
	var gens []uint64
	for _, p := range pos {
		g, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			if len(pos) == 1 {
				break // a directory
			}
			fmt.Fprintf(s.err, "slivingdoc diff: %q is not a generation\n", p)
			return 2
		}
		gens = append(gens, g)
	}
	show := func(files []history.Change) {
		if *stat {
			printStat(s.out, files, "")
			return
		}
		writePatch(s.out, files)
	}
	if len(gens) == 0 {
		return c.inDir(ctx, pos, false, func(e *server.Engine, dir string) error {
			files, err := e.LocalDiff(ctx, dir, *pathFlag)
			if err == nil {
				show(files)
			}
			return err
		})
	}
	from, to := gens[0], history.Latest
	if len(gens) == 2 {
		to = gens[1]
	}
	return c.storeOnly(ctx, func(e *server.Engine) error {
		files, err := e.Diff(ctx, from, to, *pathFlag)
		if err == nil {
			show(files)
		}
		return err
	})
}

// storeOnly runs op on an engine for a command that reads the store and
// no directory (log, show, diff of generations).
func (c *cliCommand) storeOnly(ctx context.Context, op func(e *server.Engine) error) int {
	if wd, err := os.Getwd(); err == nil {
		c.settings.Dir = wd // run inside a notebook: its store, when none is given (store.go)
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
	if err := op(e); err != nil {
		return c.fail(e, cfg, err)
	}
	return 0
}

// printStat prints one line per file and the totals, indented by indent.
func printStat(w io.Writer, files []history.Change, indent string) {
	p := colourFor(w)
	ins, del := 0, 0
	for _, f := range files {
		fmt.Fprintf(w, "%s%s  %s %s\n", indent, safeText(f.Path), p.paint(ansiGreen, fmt.Sprintf("+%d", f.Insertions)), p.paint(ansiRed, fmt.Sprintf("-%d", f.Deletions)))
		ins += f.Insertions
		del += f.Deletions
	}
	fmt.Fprintf(w, "%s%s\n", indent, totals(len(files), ins, del))
}

const ansiCyan = "\x1b[36m"

// writePatch writes files as a git-style unified diff, coloured on a
// terminal (colourFor):
//
//	diff --git a/notes/a.md b/notes/a.md
//	new file mode 100644          (added files; "deleted file mode" for removed)
//	--- a/notes/a.md              (/dev/null for an added file)
//	+++ b/notes/a.md              (/dev/null for a removed file)
//	@@ -1,3 +1,4 @@
//	 context
//	-removed line
//	+added line
//	\ No newline at end of file
//
// Content bytes are written as they are (a CR stays before its LF), so the
// patch applies byte for byte. A name with a space gets a tab after it on
// the ---/+++ lines, as git writes it, so patch(1) finds where it ends.
// Notebook names hold no control character, quote or backslash, so no
// name needs quoting.
func writePatch(out io.Writer, files []history.Change) {
	w := bufio.NewWriter(out)
	defer w.Flush()
	p := colourFor(out)
	term := isTerminal(out)
	line := func(code, s string) {
		if code != "" {
			s = p.paint(code, s)
		}
		w.WriteString(s)
		w.WriteByte('\n')
	}
	for _, f := range files {
		a, b := "a/"+f.Path, "b/"+f.Path
		hunks := merge.Unified(f.Old, f.New, merge.DefaultContext)
		if len(hunks) == 0 && strings.ContainsRune(f.Path, ' ') {
			// An empty file added or removed has no ---/+++ lines to
			// name it, and patch(1) cannot split "a/x y b/x y": quote
			// the names (git's quoted form, which git apply reads too).
			line(ansiBold, `diff --git "`+a+`" "`+b+`"`)
		} else {
			line(ansiBold, "diff --git "+a+" "+b)
		}
		switch {
		case f.Added:
			line(ansiBold, "new file mode 100644")
		case f.Removed:
			line(ansiBold, "deleted file mode 100644")
		}
		if len(hunks) == 0 {
			continue // an empty file added or removed: the header says it all
		}
		name := func(n string) string {
			if strings.ContainsRune(f.Path, ' ') {
				return n + "\t"
			}
			return n
		}
		if f.Added {
			a = "/dev/null"
		} else {
			a = name(a)
		}
		if f.Removed {
			b = "/dev/null"
		} else {
			b = name(b)
		}
		line(ansiBold, "--- "+a)
		line(ansiBold, "+++ "+b)
		for _, h := range hunks {
			line(ansiCyan, h.Header())
			for _, l := range h.Lines {
				text := string(l.Text)
				if !l.NoEOL {
					text = text[:len(text)-1]
				}
				if term {
					text = safeLine(text)
				}
				switch l.Op {
				case merge.OpDelete:
					line(ansiRed, "-"+text)
				case merge.OpInsert:
					line(ansiGreen, "+"+text)
				default:
					line("", " "+text)
				}
				if l.NoEOL {
					line("", merge.NoNewline)
				}
			}
		}
	}
}

// isTerminal reports whether w is a terminal (colour aside: NO_COLOR
// turns colour off, not this).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// safeLine is a content line for a terminal: control characters written
// by someone else are shown as \xNN (safeText) so they cannot drive it;
// a CR ending a CRLF line stays, it moves nothing that matters. Into a
// pipe or file the bytes are written as they are, so the patch applies.
func safeLine(s string) string {
	body, cr := strings.CutSuffix(s, "\r")
	out := safeText(body)
	if cr {
		out += "\r"
	}
	return out
}
