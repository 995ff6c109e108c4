package dircall

import (
	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/server/history"
	"github.com/slivingdoc/slivingdoc/server/plan"
)

// FileStat is one file's line delta.
type FileStat struct {
	Path       string
	Insertions int
	Deletions  int
}

// Result is the outcome of a successful pull or commit.
type Result struct {
	Path       string // the resolved visible directory
	Generation uint64 // the accepted generation after the operation
	Files      []FileStat
	// BroughtIn is, for a commit, what it wrote into the directory besides
	// the caller's own changes: others' concurrent changes it merged (the
	// on-disk delta of L). Not part of the MCP result (the CLI prints it).
	BroughtIn []FileStat
}

// Diffstat is the per-file line delta of changes (on-disk delta of L).
func Diffstat(changes []plan.Change) []FileStat {
	out := []FileStat{}
	for i := range changes {
		ins, del := changes[i].Stat()
		out = append(out, FileStat{Path: changes[i].Path, Insertions: ins, Deletions: del})
	}
	return out
}

// TreeDelta is the per-file line delta from one tree to the next, as a
// commit's result reports it.
func TreeDelta(src cas.Source, from, to map[string]cas.ID) ([]FileStat, error) {
	cs, err := history.TreeDelta(src, from, to)
	if err != nil {
		return nil, err
	}
	out := make([]FileStat, len(cs))
	for i, c := range cs {
		out[i] = FileStat{Path: c.Path, Insertions: c.Insertions, Deletions: c.Deletions}
	}
	return out, nil
}
