package mcpserver

import (
	"github.com/slivingdoc/slivingdoc/server"
	"github.com/slivingdoc/slivingdoc/server/diag"
)

// The structs below fix the field order of the success object to the
// spec's; every slice is non-nil so it is always present as an array. The
// structured error is diag.Envelope.

type okResult struct {
	Code         string     `json:"code"`
	Path         string     `json:"path"`
	Generation   uint64     `json:"generation"`
	FilesChanged int        `json:"filesChanged"`
	Insertions   int        `json:"insertions"`
	Deletions    int        `json:"deletions"`
	Files        []fileStat `json:"files"`
	ReadOnly     []string   `json:"readOnly"`
	Writable     []string   `json:"writable"`
}

type fileStat struct {
	Path       string `json:"path"`
	Insertions int    `json:"insertions"`
	Deletions  int    `json:"deletions"`
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func newOK(r *server.Result, p pathSets) okResult {
	out := okResult{
		Code:       "OK",
		Path:       r.Path,
		Generation: r.Generation,
		Files:      make([]fileStat, 0, len(r.Files)),
		ReadOnly:   nonNil(p.readOnly),
		Writable:   nonNil(p.writable),
	}
	for _, f := range r.Files {
		out.Files = append(out.Files, fileStat{f.Path, f.Insertions, f.Deletions})
		out.Insertions += f.Insertions
		out.Deletions += f.Deletions
	}
	out.FilesChanged = len(out.Files)
	return out
}

// okText is the success text item: the directory, plus the path sets.
func okText(r okResult, p pathSets) string { return r.Path + p.dirSuffix() }

// newErr builds the envelope of a domain error (diag.NewEnvelope) with
// this server's path sets.
func newErr(e *server.Error, diagID string, p pathSets, sc *diag.Scrubber) diag.Envelope {
	return diag.NewEnvelope(e, diagID, p.writable, p.readOnly, sc)
}

// errText is the candid text item (diag.Envelope.Text, plain).
func errText(r diag.Envelope) string { return r.Text(diag.Style{}) }
