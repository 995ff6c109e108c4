package plan

import (
	"bytes"
	"maps"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/merge"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/pstate"
)

// Paths whose base is unknown (docs/local-state.md, L5 and L7).
//
// Sometimes P cannot tell which accepted version a file of L was made
// from: the directory has no record at all (copied, renamed, its private
// root cleared, or newer than a store restored from a backup), a path
// stops being ignored while L holds a file there, or the caller edited a
// file after a crash so that neither of the rewrite's versions explains it.
// A three-way merge against a guessed base would be wrong either way (an
// empty base concatenates the two texts; an old one takes others' lines
// for the caller's), so such a path is never merged:
//
//   - L's file equal to the notebook's: adopted, nothing to do;
//   - only one side has a file: it is kept (a file the notebook lacks is
//     a local addition; one L lacks comes back from the notebook);
//   - both differ: one conflict block holds L's whole text and the
//     notebook's, reported with reason diag.NoRecord, for the caller to merge.
//
// In a baseline such a path carries UnknownBase, an ID no content has,
// and is held (non-exact), so no fast path trusts the baseline there.

// UnknownBase marks a baseline entry whose base is unknown.
var UnknownBase = cas.ID{
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
} // every byte 0xff, written out so that it is static data

// WithUnknown is b with an unknown base at each of paths (b may be nil: a
// directory without a record). paths is not empty: b itself stands for
// none.
func WithUnknown(b *pstate.Baseline, paths []string) pstate.Baseline {
	out := pstate.Baseline{Files: map[string]cas.ID{}, Held: map[string]cas.ID{}}
	if b != nil {
		out.Generation, out.Head = b.Generation, b.Head
		for p, id := range b.Tree() {
			out.Files[p] = id
		}
		for p, id := range b.Held {
			out.Held[p] = id
		}
	}
	var head map[string]cas.ID
	if b != nil {
		head = b.HeadTree()
	}
	for _, p := range paths {
		if _, ok := out.Held[p]; !ok {
			out.Held[p] = head[p]
		}
		out.Files[p] = UnknownBase
	}
	return out
}

// UnknownPaths lists the paths of b whose base is unknown (none when b is
// nil).
func UnknownPaths(b *pstate.Baseline) []string {
	if b.Exact() {
		return nil
	}
	var out []string
	files := b.Tree()
	for p := range b.Held {
		if files[p] == UnknownBase {
			out = append(out, p)
		}
	}
	return out
}

// decideUnknown decides the paths whose base is unknown (see above) and
// removes them from the three trees the tree merge then takes, adding
// their results to m. It returns the trees to merge.
func decideUnknown(m *Merged, unknown []string, base, local, remote map[string]cas.ID, load merge.Loader) (b, l, r map[string]cas.ID, err error) {
	if len(unknown) == 0 {
		return base, local, remote, nil
	}
	b, l, r = maps.Clone(base), maps.Clone(local), maps.Clone(remote)
	for _, p := range unknown {
		lid, inL := l[p]
		rid, inR := r[p]
		delete(b, p)
		delete(l, p)
		delete(r, p)
		switch {
		case inL && inR && lid == rid, inR && !inL:
			m.IDs[p] = rid
		case inL && !inR:
			m.IDs[p] = lid
		case inL && inR:
			lc, err := load(lid)
			if err != nil {
				return nil, nil, nil, err
			}
			rc, err := load(rid)
			if err != nil {
				return nil, nil, nil, err
			}
			content, ranges := bothTexts(lc, rc)
			id, err := cas.WriteFile(nil, content)
			if err != nil {
				return nil, nil, nil, err
			}
			m.IDs[p] = id
			m.Contents[p] = content
			m.Conflicts = append(m.Conflicts, merge.Conflict{Path: p, Reason: diag.NoRecord, Ranges: ranges})
		}
	}
	return b, l, r, nil
}

// bothTexts is one conflict block holding local's whole text and remote's,
// and the block's line range. A text lacking a final newline gets one
// before the next marker; the markers end in CRLF when local's lines do.
func bothTexts(local, remote []byte) ([]byte, []merge.Range) {
	eol := "\n"
	if i := bytes.IndexByte(local, '\n'); i > 0 && local[i-1] == '\r' {
		eol = "\r\n"
	}
	var out bytes.Buffer
	side := func(text []byte) {
		out.Write(text)
		if len(text) > 0 && text[len(text)-1] != '\n' {
			out.WriteString(eol)
		}
	}
	out.WriteString("<<<<<<< local" + eol)
	side(local)
	out.WriteString("=======" + eol)
	side(remote)
	out.WriteString(">>>>>>> remote" + eol)
	content := out.Bytes()
	return content, merge.ScanMarkers(content)
}
