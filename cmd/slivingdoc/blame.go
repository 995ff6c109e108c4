package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/slivingdoc/slivingdoc/server"
	"github.com/slivingdoc/slivingdoc/server/history"
)

func init() {
	register(command{name: "blame", summary: "show who last changed each line of a file, and when", run: runBlame, oneShot: true, ownSignals: true})
}

// runBlame prints each line of a file as the notebook holds it with the
// publication that last changed it (server.Engine.Blame).
func runBlame(ctx context.Context, args []string, s stdio) int {
	c := newCLICommand("blame", "blame [flags] [DIR] PATH",
		"For each line of the file PATH as the notebook holds it (the accepted head: edits not\n"+
			"committed yet in the directory are not shown), the generation of the publication that\n"+
			"last changed the line (inserted it, or replaced what was there), its author and time,\n"+
			"then the line number and the line. A line older than the retained history shows\n"+
			"'before generation N', N the oldest retained publication. Authors show as 'unknown'\n"+
			"until the store records them. Reads the store; writes nothing.\n\n"+
			"PATH is relative to DIR (default the working directory) when it lies in a notebook\n"+
			"directory, and otherwise names the file in the notebook.\n\n"+
			"Examples:\n"+
			"  slivingdoc blame notes/plan.md            every line of notes/plan.md\n"+
			"  slivingdoc blame -L 10,20 notes plan.md   lines 10 to 20 of plan.md in the directory notes\n"+
			"  slivingdoc blame --long --json plan.md    with each publication's message, for a script", s)
	long := c.fs.Bool("long", false, "also show the first line of each publication's message")
	lines := c.fs.String("L", "", "only the lines `START,END` (one-based, inclusive; START, or START, alone: to the end)")
	asJSON := c.fs.Bool("json", false, "print one JSON object (docs/cli.md gives its fields)")
	pos, code, done := c.parse(args, 2)
	if done {
		return code
	}
	if len(pos) == 0 {
		fmt.Fprintf(s.err, "slivingdoc blame: want a file: blame [DIR] PATH\nRun 'slivingdoc blame -h' for the reference.\n")
		return 2
	}
	q := history.BlameQuery{}
	if *lines != "" {
		var err error
		if q.Start, q.End, err = parseLineRange(*lines); err != nil {
			fmt.Fprintf(s.err, "slivingdoc blame: -L %s: %v\n", *lines, err)
			return 2
		}
	}
	dirArg, file := ".", pos[0]
	if len(pos) == 2 {
		dirArg, file = pos[0], pos[1]
	}
	if file == "" {
		fmt.Fprintf(s.err, "slivingdoc blame: empty path\n")
		return 2
	}
	dir, code, done := c.notebookDir([]string{dirArg}, false)
	if done {
		return code
	}
	c.settings.Dir = dir // a notebook directory's remembered store, when none is given
	cfg, code, done := c.config(ctx)
	if done {
		return code
	}
	q.Path = notebookPath(cfg, dir, file)
	e, code, done := c.start(&cfg, logWorkspace(cfg.PrivateRoot))
	if done {
		return code
	}
	defer e.Close()
	res, err := e.Blame(ctx, q)
	if err != nil {
		return c.fail(e, cfg, err)
	}
	if *asJSON {
		err = printBlameJSON(s.out, res)
	} else {
		printBlame(s.out, res, *long)
	}
	if err != nil {
		return c.fail(e, cfg, err)
	}
	return 0
}

// notebookPath turns PATH, relative to dir (or absolute), into a path
// relative to the notebook directory it lies in; a PATH in no notebook
// directory is taken as notebook-relative already (blame notes/plan.md
// anywhere, with the store named by flags).
func notebookPath(cfg server.Config, dir, file string) string {
	abs := file
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(dir, abs)
	}
	// NotebookRoot returns the path it is given when no directory at or
	// above it is a notebook; a child name that is no notebook tells the
	// two cases apart.
	probe := filepath.Join(filepath.Dir(abs), ".slivingdoc-blame")
	if root := server.NotebookRoot(cfg, probe); root != probe {
		if rel, err := filepath.Rel(root, abs); err == nil {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.ToSlash(file)
}

// parseLineRange reads -L's START,END (START alone, or START with an
// empty END, runs to the end of the file).
func parseLineRange(v string) (start, end int, err error) {
	a, b, hasEnd := strings.Cut(v, ",")
	if start, err = strconv.Atoi(a); err != nil || start < 1 {
		return 0, 0, fmt.Errorf("START must be a line number from 1")
	}
	if !hasEnd || b == "" {
		return start, 0, nil
	}
	if end, err = strconv.Atoi(b); err != nil || end < start {
		return 0, 0, fmt.Errorf("END must be a line number at or after START")
	}
	return start, end, nil
}

// printBlame prints one line per line of the file:
//
//	generation 42          2026-11-30T10:20:20Z  unknown   1  # Plan
//	before generation 7                          unknown   2  an old line
//
// with --long, the first line of the publication's message after the
// author. Columns are as wide as their widest entry.
func printBlame(w io.Writer, res *history.BlameResult, long bool) {
	p := colourFor(w)
	type row struct{ gen, when, author, msg string }
	rows := make([]row, len(res.Lines))
	var wGen, wWhen, wAuthor, wMsg int
	for i, l := range res.Lines {
		r := row{gen: fmt.Sprintf("generation %d", l.Generation), author: "unknown"}
		if l.Before {
			r.gen = fmt.Sprintf("before generation %d", l.Generation)
		} else {
			r.when = l.Time.UTC().Format(time.RFC3339)
		}
		if l.Author != "" {
			r.author = safeText(l.Author)
		}
		if long {
			r.msg = safeText(messageSummary(l.Message))
		}
		rows[i] = r
		wGen, wWhen = max(wGen, len(r.gen)), max(wWhen, len(r.when))
		wAuthor, wMsg = max(wAuthor, utf8.RuneCountInString(r.author)), max(wMsg, utf8.RuneCountInString(r.msg))
	}
	wNum := 1
	if n := len(res.Lines); n > 0 {
		wNum = len(strconv.Itoa(res.Lines[n-1].Number))
	}
	for i, l := range res.Lines {
		r := rows[i]
		fmt.Fprintf(w, "%s  %-*s  %s", p.paint(ansiYel, pad(r.gen, wGen)), wWhen, r.when, pad(r.author, wAuthor))
		if long {
			fmt.Fprintf(w, "  %s", pad(r.msg, wMsg))
		}
		text := strings.TrimSuffix(strings.TrimSuffix(string(l.Text), "\n"), "\r")
		fmt.Fprintf(w, "  %*d  %s\n", wNum, l.Number, safeText(text))
	}
}

// pad pads s with spaces to width runes.
func pad(s string, width int) string {
	if n := utf8.RuneCountInString(s); n < width {
		return s + strings.Repeat(" ", width-n)
	}
	return s
}

// messageSummary is a message's first line.
func messageSummary(msg string) string {
	first, _, _ := strings.Cut(msg, "\n")
	return first
}

// blameJSON is blame --json: stable field names for scripts.
type blameJSON struct {
	Path       string          `json:"path"`
	Generation uint64          `json:"generation"`
	Lines      []blameLineJSON `json:"lines"`
}

type blameLineJSON struct {
	Line       int     `json:"line"`
	Generation uint64  `json:"generation"`
	Before     bool    `json:"before"`
	Time       *string `json:"time"`    // null when before
	Author     string  `json:"author"`  // "" when unknown
	Message    *string `json:"message"` // null when before
	Text       string  `json:"text"`
}

func printBlameJSON(w io.Writer, res *history.BlameResult) error {
	out := blameJSON{Path: res.Path, Generation: res.Generation, Lines: make([]blameLineJSON, len(res.Lines))}
	for i, l := range res.Lines {
		j := blameLineJSON{Line: l.Number, Generation: l.Generation, Before: l.Before, Author: l.Author, Text: string(l.Text)}
		if !l.Before {
			t, m := l.Time.UTC().Format(time.RFC3339), l.Message
			j.Time, j.Message = &t, &m
		}
		out.Lines[i] = j
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}
