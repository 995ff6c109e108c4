package mcpserver

import (
	"github.com/slivingdoc/slivingdoc/internal/noinit"
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
func newErr(e *diag.Error, diagID string, p pathSets, sc *diag.Scrubber) diag.Envelope {
	return diag.NewEnvelope(e, diagID, p.writable, p.readOnly, sc)
}

// catalogued is every token the outputSchema allows, by field, built on
// the first domain error serve reports rather than at package init.
func catalogued() map[string]map[string]bool { return cataloguedOnce.Get(makeCatalogued) }

var cataloguedOnce noinit.Lazy[map[string]map[string]bool]

func makeCatalogued() map[string]map[string]bool {
	t := diag.CatalogTokens()
	set := func(s []string) map[string]bool {
		m := make(map[string]bool, len(s))
		for _, v := range s {
			m[v] = true
		}
		return m
	}
	return map[string]map[string]bool{"code": set(t.Codes), "reason": set(t.Reasons), "action": set(t.Actions), "file": set(t.FileReasons)}
}

// uncatalogued names the first token of env that diag.Catalog lacks,
// or returns "". Such an envelope would fail the outputSchema every
// validating client checks, turning a domain error into a protocol error,
// so the caller replaces it (a test fails on the log record first).
func uncatalogued(env diag.Envelope) string {
	switch {
	case !catalogued()["code"][env.Code]:
		return "code " + env.Code
	case !catalogued()["reason"][env.Reason]:
		return "reason " + env.Reason
	case !catalogued()["action"][env.Action]:
		return "action " + env.Action
	}
	for _, f := range env.Files {
		if !catalogued()["file"][f.Reason] {
			return "file reason " + f.Reason
		}
	}
	return ""
}

// errText is the candid text item (diag.Envelope.Text, plain).
func errText(r diag.Envelope) string { return r.Text(diag.Style{}) }
