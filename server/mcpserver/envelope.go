package mcpserver

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/slivingdoc/slivingdoc/server"
)

// The structs below fix the field order of the structured objects to the
// spec's; every slice is non-nil so it is always present as an array.

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

type errResult struct {
	Code         string        `json:"code"`
	Reason       string        `json:"reason"`
	Action       string        `json:"action"`
	DiagnosticID string        `json:"diagnosticId"`
	Retryable    bool          `json:"retryable"`
	Message      string        `json:"message"`
	Detail       string        `json:"detail,omitempty"`
	Files        []fileError   `json:"files"`
	Recovery     *recoveryJSON `json:"recovery,omitempty"`
	ReadOnly     []string      `json:"readOnly"`
	Writable     []string      `json:"writable"`
}

type fileError struct {
	Path   string      `json:"path"`
	Reason string      `json:"reason"`
	Ranges []lineRange `json:"ranges"`
}

type lineRange struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

type recoveryJSON struct {
	Stage          string `json:"stage"`
	RemoteAccepted string `json:"remoteAccepted"`
	Resynchronized bool   `json:"resynchronized"`
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

// newErr builds the envelope of a domain error. Tokens the engine left
// empty are completed from server.Catalog so an agent always has a reason
// and a next step; all diagnostic text is scrubbed. File paths are not:
// they are the caller's own names, and an agent must find the file.
func newErr(e *server.Error, diagID string, p pathSets, sc scrubber) errResult {
	out := errResult{
		Code:         string(e.Code),
		Reason:       e.Reason,
		Action:       string(e.Action),
		DiagnosticID: diagID,
		Retryable:    e.Retryable,
		Message:      sc.text(e.Message),
		Files:        make([]fileError, 0, len(e.Files)),
		ReadOnly:     nonNil(p.readOnly),
		Writable:     nonNil(p.writable),
	}
	if out.Code == "" {
		out.Code, out.Reason = string(server.CodeEngineFailed), server.ReasonInternal
	}
	if out.Reason == "" || out.Action == "" {
		row := catalogRow(server.Code(out.Code), out.Reason)
		if out.Reason == "" {
			out.Reason = row.Reason
		}
		if out.Action == "" {
			out.Action = string(row.Action)
			out.Retryable = row.Retryable
		}
	}
	if out.Message == "" {
		out.Message = catalogRow(server.Code(out.Code), out.Reason).Meaning
	}
	if e.Code == server.CodeEngineFailed {
		out.Detail = sc.text(e.Detail)
	}
	for _, f := range e.Files {
		fe := fileError{Path: f.Path, Reason: f.Reason, Ranges: make([]lineRange, 0, len(f.Ranges))}
		if fe.Reason == "" {
			fe.Reason = out.Reason
		}
		for _, r := range f.Ranges {
			fe.Ranges = append(fe.Ranges, lineRange{r.Start, r.End})
		}
		out.Files = append(out.Files, fe)
	}
	if e.Code == server.CodeRecoveryFailure && e.Recovery != nil {
		out.Recovery = &recoveryJSON{
			Stage:          sc.text(e.Recovery.Stage),
			RemoteAccepted: e.Recovery.RemoteAccepted,
			Resynchronized: e.Recovery.Resynchronized,
		}
	}
	return out
}

// catalogRow returns the row for code and reason, else the code's first
// row, else ENGINE_FAILED/INTERNAL.
func catalogRow(code server.Code, reason string) server.CatalogRow {
	var first *server.CatalogRow
	for i, row := range server.Catalog {
		if row.Code != code {
			continue
		}
		if row.Reason == reason {
			return row
		}
		if first == nil {
			first = &server.Catalog[i]
		}
	}
	if first != nil {
		return *first
	}
	return catalogRow(server.CodeEngineFailed, server.ReasonInternal)
}

// errText is the candid text item: everything in the envelope, so a client
// that drops structured content still has the whole safe diagnostic.
// Without path sets and recovery it is exactly the spec's example format.
func errText(r errResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s · %s\n%s\n", r.Code, r.Reason, r.Message)
	if r.Detail != "" {
		fmt.Fprintf(&b, "detail: %s\n", r.Detail)
	}
	for _, f := range r.Files {
		fmt.Fprintf(&b, "file: %s · %s", f.Path, f.Reason)
		if len(f.Ranges) > 0 {
			b.WriteString(" · " + rangesText(f.Ranges))
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "action: %s\nretryable: %t\ndiagnosticId: %s", r.Action, r.Retryable, r.DiagnosticID)
	if r.Recovery != nil {
		fmt.Fprintf(&b, "\nrecovery: stage %s · remoteAccepted %s · resynchronized %t",
			r.Recovery.Stage, r.Recovery.RemoteAccepted, r.Recovery.Resynchronized)
	}
	if len(r.Writable) > 0 {
		b.WriteString("\nwritable: " + entries(r.Writable))
	}
	if len(r.ReadOnly) > 0 {
		b.WriteString("\nread-only: " + entries(r.ReadOnly))
	}
	return b.String()
}

// rangesText renders "lines 12-18" for one range and "lines 3-4, 9-12" for
// several; a one-line range is still written start-end so the form never
// varies.
func rangesText(rs []lineRange) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = strconv.Itoa(r.Start) + "-" + strconv.Itoa(r.End)
	}
	return "lines " + strings.Join(parts, ", ")
}
