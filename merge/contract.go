package merge

// This file is the contract other packages code against while merge is being
// built. The merge owner replaces the bodies (and may move the declarations
// to focused files); the signatures here may grow but must not change.

import "github.com/slivingdoc/slivingdoc/cas"

// Range is a one-based, inclusive line range.
type Range struct {
	Start int
	End   int
}

// TextResult is the outcome of a three-way text merge. Conflicts holds the
// line range of every conflict block written into Content, in order; it is
// empty for a clean merge.
type TextResult struct {
	Content   []byte
	Conflicts []Range
}

// Text merges local and remote edits of base line by line (diff3), byte for
// byte, with conflict blocks marked "<<<<<<< local", "=======", ">>>>>>> remote".
func Text(base, local, remote []byte) TextResult { panic("merge: Text not implemented yet") }

// ScanMarkers returns the line range of every complete conflict block in content.
func ScanMarkers(content []byte) []Range { panic("merge: ScanMarkers not implemented yet") }

// CountLines counts lines by the diffstat rule: a final run without LF is a
// line; empty content has none.
func CountLines(content []byte) int { panic("merge: CountLines not implemented yet") }

// Stat returns the inserted and deleted lines between two versions of a file
// (nil old: added file; nil new: removed file).
func Stat(old, new []byte) (insertions, deletions int) { panic("merge: Stat not implemented yet") }

// FileReason is the stable per-file conflict token.
type FileReason string

const (
	TextConflict  FileReason = "TEXT_CONFLICT"
	ModifyDelete  FileReason = "MODIFY_DELETE"
	FileDirectory FileReason = "FILE_DIRECTORY"
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

// Trees merges the three trees A (base), L (local) and R (remote) path by path.
func Trees(base, local, remote Tree, load Loader) (TreeResult, error) {
	panic("merge: Trees not implemented yet")
}
