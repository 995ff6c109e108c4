package main

// The history side of log: time arguments, the -p and --json forms.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/slivingdoc/slivingdoc/server/history"
)

// parseWhen reads a --since/--until value: RFC 3339, a UTC date or date
// and time, or an age before now (90m, 36h, 7d). A bare date as an upper
// bound (endOfDay) includes the whole day. "" is no bound.
func parseWhen(v string, now time.Time, endOfDay bool) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, nil
		}
	}
	if t, err := time.Parse("2006-01-02", v); err == nil {
		if endOfDay {
			t = t.Add(24*time.Hour - time.Second)
		}
		return t, nil
	}
	if days, ok := strings.CutSuffix(v, "d"); ok {
		if n, err := strconv.ParseUint(days, 10, 16); err == nil {
			return now.Add(-time.Duration(n) * 24 * time.Hour), nil
		}
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, errors.New(strconv.Quote(v) + " is not a time (want 2026-11-30T10:00:00Z, 2026-11-30 or an age like 36h or 7d)")
}

// printLogPatch prints each entry as printLog does, then a blank line and
// its patch.
func printLogPatch(w io.Writer, entries []history.Entry) {
	for i, en := range entries {
		if i > 0 {
			fmt.Fprintln(w)
		}
		printLog(w, []history.Entry{en})
		if len(en.Files) > 0 {
			fmt.Fprintln(w)
			writePatch(w, en.Files)
		}
	}
}

// logJSON is one entry of log --json: stable field names for scripts.
type logJSON struct {
	Generation uint64     `json:"generation"`
	Time       string     `json:"time"`
	Message    string     `json:"message"`
	Author     string     `json:"author"` // "" when unknown
	Files      []fileJSON `json:"files"`
	Patch      *string    `json:"patch,omitempty"`
}

type fileJSON struct {
	Path       string `json:"path"`
	Status     string `json:"status"` // added, modified or removed
	Insertions int    `json:"insertions"`
	Deletions  int    `json:"deletions"`
}

func printLogJSON(w io.Writer, entries []history.Entry, withPatch bool) error {
	out := make([]logJSON, len(entries))
	for i, en := range entries {
		out[i] = logJSONOf(en, withPatch)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// logJSONOf is en as log --json prints it.
func logJSONOf(en history.Entry, withPatch bool) logJSON {
	out := logJSON{Generation: en.Generation, Time: en.Time.UTC().Format(time.RFC3339), Message: en.Message, Author: en.Author, Files: filesJSON(en.Files)}
	if withPatch {
		var b bytes.Buffer
		writePatch(&b, en.Files) // a buffer is no terminal: never coloured
		p := b.String()
		out.Patch = &p
	}
	return out
}

func filesJSON(files []history.Change) []fileJSON {
	out := make([]fileJSON, len(files))
	for i, f := range files {
		st := "modified"
		switch {
		case f.Added:
			st = "added"
		case f.Removed:
			st = "removed"
		}
		out[i] = fileJSON{Path: f.Path, Status: st, Insertions: f.Insertions, Deletions: f.Deletions}
	}
	return out
}
