package rules

import (
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/merge"
	"github.com/slivingdoc/slivingdoc/server/secrets"
)

// Changes is what a commit would publish against its baseline A, as the
// credential check reads it. The funcs are the engine's: where content
// comes from is its business.
type Changes struct {
	Files   map[string]cas.ID // path → the ID L gives it; zero: removed
	Old     map[string]cas.ID // path → A's ID, for the paths of Files that A holds
	Virtual map[string]bool   // A's files at ignored paths: not L's, never checked

	// Load returns a changed file's content; its error ends the check
	// and is returned as it is.
	Load func(cas.ID) ([]byte, error)
	// Before returns A's content of a file, or nil when no local cache
	// holds it: then every line counts as added, refusing is the safe
	// side.
	Before func(cas.ID) []byte
	// Base returns A's files; it is called only when the name of a new
	// file's directory holds a credential.
	Base func() map[string]cas.ID
}

// Secret is a file a commit may not publish.
type Secret struct {
	// Path is the file's path as it may be shown: in a name that holds
	// a credential, the credential is replaced by secrets.Placeholder.
	Path string
	// InName: the file's name, or the name of a new directory above it,
	// holds the credential; its content was not read and Ranges is empty.
	InName bool
	// Ranges are the added lines that hold a credential, ordered and
	// merged where they overlap or touch.
	Ranges []merge.Range
}

// Secrets returns the files of c whose added lines, or whose new names,
// hold a recognised credential, in path order. Only the lines a file adds
// against A are matched, so a file pulled with a secret in it can still be
// edited and committed; a name is checked only when it is new, each shown
// name is listed once. log gets the file, the rule and the lines of each
// finding, never the match.
func Secrets(c Changes, log *slog.Logger) ([]Secret, error) {
	var refused []Secret
	named := map[string]bool{} // redacted paths already reported
	for _, p := range slices.Sorted(maps.Keys(c.Files)) {
		id := c.Files[p]
		if id.IsZero() || c.Virtual[p] {
			continue // removed, or not L's
		}
		oldID, inA := c.Old[p]
		inA = inA && !oldID.IsZero()
		if !inA {
			if shown, bad := secretInName(p, c.Base); bad {
				if !named[shown] {
					named[shown] = true
					log.Warn("commit refused: a new name holds a recognised credential", "path", shown)
					refused = append(refused, Secret{Path: shown, InName: true, Ranges: []merge.Range{}})
				}
				continue // its content is not read: the refusal already names it
			}
		}
		content, err := c.Load(id)
		if err != nil {
			return nil, err
		}
		var before []byte
		if inA {
			before = c.Before(oldID)
		}
		found := secrets.Added(before, content)
		if len(found) == 0 {
			continue
		}
		for _, f := range found {
			log.Warn("commit refused: a file adds a recognised credential", "path", p, "rule", f.Rule, "start", f.Start, "end", f.End)
		}
		refused = append(refused, Secret{Path: p, Ranges: secretRanges(found)})
	}
	return refused, nil
}

// secretInName reports whether the new path p has a recognised credential
// in its file name or in the name of a directory that is new too (one A
// already holds was accepted earlier and does not block this commit), and
// p as it may be shown: each such name with the credential replaced.
func secretInName(p string, base func() map[string]cas.ID) (shown string, found bool) {
	segs := strings.Split(p, "/")
	var inA map[string]cas.ID // A's files, decoded only when a directory name holds a credential
	for i, seg := range segs {
		red, ok := secrets.Redact(seg)
		if !ok {
			continue
		}
		if i < len(segs)-1 {
			dir := strings.Join(segs[:i+1], "/") + "/"
			if inA == nil {
				inA = base()
			}
			if hasPrefixKey(inA, dir) {
				continue // accepted earlier
			}
		}
		segs[i], found = red, true
	}
	return strings.Join(segs, "/"), found
}

func hasPrefixKey(m map[string]cas.ID, prefix string) bool {
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

// secretRanges orders the findings' lines and merges overlapping or
// adjacent ranges (the envelope's ranges are ordered, non-overlapping).
func secretRanges(found []secrets.Finding) []merge.Range {
	rs := make([]merge.Range, 0, len(found))
	for _, f := range found {
		rs = append(rs, merge.Range{Start: f.Start, End: f.End})
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].Start < rs[j].Start })
	out := rs[:0]
	for _, r := range rs {
		if n := len(out); n > 0 && r.Start <= out[n-1].End+1 {
			out[n-1].End = max(out[n-1].End, r.End)
			continue
		}
		out = append(out, r)
	}
	return out
}
