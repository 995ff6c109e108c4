package merge

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/slivingdoc/slivingdoc/cas"
)

// FileReason is the stable per-file conflict token.
type FileReason string

const (
	TextConflict  FileReason = "TEXT_CONFLICT"
	ModifyDelete  FileReason = "MODIFY_DELETE"
	FileDirectory FileReason = "FILE_DIRECTORY"
	// Unresolved: local's file still holds conflict blocks while the
	// remote changed it too. It is not merged (that would nest blocks):
	// local's text is kept as it is, the conflict names its blocks, and
	// the caller keeps the base of this path until the blocks are resolved
	// (so the remote's change is merged then, against the right base).
	Unresolved FileReason = "CONFLICT_MARKERS"
)

// Tree is one complete notebook state: slash-separated file path to file ID.
type Tree map[string]cas.ID

// Loader returns the content of a file ID (used only when a text merge is needed).
type Loader func(cas.ID) ([]byte, error)

// Entry is one file of a merge result: either an existing file ID, or, when
// the file was produced by a text merge (clean or with conflict blocks),
// its new Content with a zero ID.
type Entry struct {
	ID      cas.ID
	Content []byte
}

// Conflict names one conflicting path; Ranges lists its conflict blocks
// (empty for MODIFY_DELETE and FILE_DIRECTORY).
type Conflict struct {
	Path   string
	Reason FileReason
	Ranges []Range
}

// TreeResult is the merged tree (what L must look like afterwards) and the
// conflicts, sorted by path.
type TreeResult struct {
	Files     map[string]Entry
	Conflicts []Conflict
}

// Trees merges the three trees A (base), L (local) and R (remote) path by
// path:
//
//   - a side that left a path as it was in A (same ID, or absent in both)
//     yields to the other side: its change, add or delete is taken without
//     loading anything;
//   - both sides with the same result (same ID, or both deleted) is clean;
//   - both changed or added differently: a text merge (on an empty base for
//     add/add), TEXT_CONFLICT when it writes conflict blocks; but when
//     local's file still holds conflict blocks (ScanMarkers), it is not
//     merged: local's text is the result, reported as Unresolved with its
//     blocks' ranges, so blocks never nest;
//   - one side modified and the other deleted: MODIFY_DELETE, and the
//     modified version is kept;
//   - a file in one side where the other has a directory (FILE_DIRECTORY):
//     the local shape is kept, because L is what the caller sees and edits.
//     If L has the file, the other side's files below it are left out of
//     the result; if L has the directory, the other side's file is left
//     out. Every path left out is reported as a FILE_DIRECTORY conflict
//     (with the file path itself), so nothing disappears silently; the
//     left-out content is still in its side's tree.
//
// load is called only for the three versions of a path that needs a text
// merge. Conflicts are sorted by path.
func Trees(base, local, remote Tree, load Loader) (TreeResult, error) {
	res := TreeResult{Files: make(map[string]Entry, len(local))}
	conflicts := map[string]Conflict{}
	for _, p := range unionPaths(base, local, remote) {
		a, inA := base[p]
		l, inL := local[p]
		r, inR := remote[p]
		switch {
		case inL == inR && l == r: // unchanged, same change, or both deleted
			if inL {
				res.Files[p] = Entry{ID: l}
			}
		case inL == inA && l == a: // only remote changed
			if inR {
				res.Files[p] = Entry{ID: r}
			}
		case inR == inA && r == a: // only local changed
			if inL {
				res.Files[p] = Entry{ID: l}
			}
		case inL && inR: // both changed, or both added, differently
			e, ranges, held, err := mergeFile(p, a, l, r, inA, load)
			if err != nil {
				return TreeResult{}, err
			}
			res.Files[p] = e
			switch {
			case held:
				conflicts[p] = Conflict{Path: p, Reason: Unresolved, Ranges: ranges}
			case len(ranges) > 0:
				conflicts[p] = Conflict{Path: p, Reason: TextConflict, Ranges: ranges}
			}
		default: // one side deleted what the other modified: keep the modified file
			id := l
			if !inL {
				id = r
			}
			res.Files[p] = Entry{ID: id}
			conflicts[p] = Conflict{Path: p, Reason: ModifyDelete}
		}
	}
	separateFilesFromDirs(res.Files, local, conflicts)
	res.Conflicts = make([]Conflict, 0, len(conflicts))
	for _, c := range conflicts {
		res.Conflicts = append(res.Conflicts, c)
	}
	slices.SortFunc(res.Conflicts, func(x, y Conflict) int { return strings.Compare(x.Path, y.Path) })
	return res, nil
}

func unionPaths(trees ...Tree) []string {
	seen := make(map[string]struct{})
	for _, t := range trees {
		for p := range t {
			seen[p] = struct{}{}
		}
	}
	paths := make([]string, 0, len(seen))
	for p := range seen {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return paths
}

// mergeFile text-merges one path that both sides changed; held reports a
// local file still holding blocks, kept as it is (ranges are its blocks).
func mergeFile(p string, a, l, r cas.ID, inA bool, load Loader) (e Entry, ranges []Range, held bool, err error) {
	lc, err := load(l)
	if err != nil {
		return Entry{}, nil, false, fmt.Errorf("merge: load the local version of %s: %w", p, err)
	}
	if blocks := ScanMarkers(lc); len(blocks) > 0 {
		return Entry{ID: l}, blocks, true, nil
	}
	var base []byte
	if inA {
		b, err := load(a)
		if err != nil {
			return Entry{}, nil, false, fmt.Errorf("merge: load the base of %s: %w", p, err)
		}
		base = b
	}
	rc, err := load(r)
	if err != nil {
		return Entry{}, nil, false, fmt.Errorf("merge: load the remote version of %s: %w", p, err)
	}
	t := Text(base, lc, rc)
	return Entry{Content: t.Content}, t.Conflicts, false, nil
}

// separateFilesFromDirs resolves a merged file that is also the directory
// of other merged files, keeping local's shape (see Trees).
func separateFilesFromDirs(files map[string]Entry, local Tree, conflicts map[string]Conflict) {
	dirs := make(map[string]bool)
	for p := range files {
		for i := strings.LastIndexByte(p, '/'); i > 0; i = strings.LastIndexByte(p[:i], '/') {
			if dirs[p[:i]] {
				break // its parents are recorded already
			}
			dirs[p[:i]] = true
		}
	}
	var clashes []string
	for p := range files {
		if dirs[p] {
			clashes = append(clashes, p)
		}
	}
	sort.Strings(clashes)
	report := func(p string) {
		if c, ok := conflicts[p]; ok && (c.Reason == TextConflict || c.Reason == Unresolved) {
			if _, kept := files[p]; kept {
				return // its blocks in the file say more than the shape
			}
		}
		conflicts[p] = Conflict{Path: p, Reason: FileDirectory}
	}
	for _, p := range clashes {
		if _, ok := files[p]; !ok {
			continue // left out by an earlier, shorter clash
		}
		if _, localFile := local[p]; localFile {
			for q := range files {
				if strings.HasPrefix(q, p+"/") {
					delete(files, q)
					report(q)
				}
			}
		} else {
			delete(files, p)
		}
		report(p)
	}
}
