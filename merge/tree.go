package merge

import "github.com/slivingdoc/slivingdoc/cas"

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
