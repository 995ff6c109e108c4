package diag

import (
	"fmt"
	"strconv"
	"strings"
)

// Envelope is the structured error (spec/mcp-tools.md, "The structured
// error"): the fields in the spec's order, every slice non-nil so it is
// always present as an array.
type Envelope struct {
	Code         string    `json:"code"`
	Reason       string    `json:"reason"`
	Action       string    `json:"action"`
	DiagnosticID string    `json:"diagnosticId"`
	Retryable    bool      `json:"retryable"`
	Message      string    `json:"message"`
	Detail       string    `json:"detail,omitempty"`
	Files        []File    `json:"files"`
	Recovery     *Recovery `json:"recovery,omitempty"`
	ReadOnly     []string  `json:"readOnly"`
	Writable     []string  `json:"writable"`
}

// File is one entry of Envelope.Files.
type File struct {
	Path   string  `json:"path"`
	Reason string  `json:"reason"`
	Ranges []Range `json:"ranges"`
}

// Range is one-based and inclusive.
type Range struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// Internal is the error for a failure the engine did not classify (a
// panic, an error that is not an *Error): its text never leaves the
// process except in the log record under the diagnosticId.
func Internal(cause error) *Error {
	return &Error{
		Code:    CodeEngineFailed,
		Reason:  ReasonInternal,
		Action:  ActionCheckHost,
		Message: "The operation failed unexpectedly; the log record with this diagnosticId has the cause.",
		Cause:   cause,
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// NewEnvelope builds the envelope of e under the diagnostic ID id. Tokens
// the engine left empty are completed from Catalog so a caller
// always has a reason and a next step; message, detail and recovery stage
// are scrubbed by sc. File paths are not: they are the caller's own names.
func NewEnvelope(e *Error, id string, writable, readOnly []string, sc *Scrubber) Envelope {
	out := Envelope{
		Code:         string(e.Code),
		Reason:       e.Reason,
		Action:       string(e.Action),
		DiagnosticID: id,
		Retryable:    e.Retryable,
		Message:      sc.Text(e.Message),
		Files:        make([]File, 0, len(e.Files)),
		ReadOnly:     nonNil(readOnly),
		Writable:     nonNil(writable),
	}
	if out.Code == "" {
		out.Code, out.Reason = string(CodeEngineFailed), ReasonInternal
	}
	if out.Reason == "" || out.Action == "" {
		row := RowFor(Code(out.Code), out.Reason)
		if out.Reason == "" {
			out.Reason = row.Reason
		}
		if out.Action == "" {
			out.Action = string(row.Action)
			out.Retryable = row.Retryable
		}
	}
	if out.Message == "" {
		out.Message = RowFor(Code(out.Code), out.Reason).Meaning
	}
	if e.Code == CodeEngineFailed {
		out.Detail = sc.Text(e.Detail)
	}
	for _, f := range e.Files {
		fe := File{Path: f.Path, Reason: f.Reason, Ranges: make([]Range, 0, len(f.Ranges))}
		if fe.Reason == "" {
			fe.Reason = out.Reason
		}
		for _, r := range f.Ranges {
			fe.Ranges = append(fe.Ranges, Range{r.Start, r.End})
		}
		out.Files = append(out.Files, fe)
	}
	if e.Code == CodeRecoveryFailure && e.Recovery != nil {
		out.Recovery = &Recovery{
			Stage:          sc.Text(e.Recovery.Stage),
			RemoteAccepted: e.Recovery.RemoteAccepted,
			Resynchronized: e.Recovery.Resynchronized,
		}
	}
	return out
}

// RowFor returns the row for code and reason, else the code's first
// row, else ENGINE_FAILED/INTERNAL.
func RowFor(code Code, reason string) CatalogRow {
	var first *CatalogRow
	for i, row := range Catalog {
		if row.Code != code {
			continue
		}
		if row.Reason == reason {
			return row
		}
		if first == nil {
			first = &Catalog[i]
		}
	}
	if first != nil {
		return *first
	}
	return RowFor(CodeEngineFailed, ReasonInternal)
}

// Style is how Text renders for one output. The zero Style is the MCP text
// item: plain, nothing escaped (JSON carries any byte). The CLI colours the
// code and file paths and makes caller-supplied text TerminalSafe.
type Style struct {
	Code func(string) string // the code token
	Path func(string) string // a file path (already Safe)
	Safe func(string) string // text that may come from someone else
}

func (s Style) code(t string) string { return apply(s.Code, t) }
func (s Style) path(t string) string { return apply(s.Path, s.safe(t)) }
func (s Style) safe(t string) string { return apply(s.Safe, t) }

func apply(f func(string) string, t string) string {
	if f == nil {
		return t
	}
	return f(t)
}

// Text is the candid text rendering: everything in the envelope, so a
// client that drops structured content still has the whole safe
// diagnostic. Without path sets and recovery it is exactly the spec's
// example format; it has no final newline.
func (e Envelope) Text(st Style) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s · %s\n%s\n", st.code(e.Code), e.Reason, st.safe(e.Message))
	if e.Detail != "" {
		fmt.Fprintf(&b, "detail: %s\n", st.safe(e.Detail))
	}
	for _, f := range e.Files {
		fmt.Fprintf(&b, "file: %s · %s", st.path(f.Path), f.Reason)
		if len(f.Ranges) > 0 {
			b.WriteString(" · " + RangesText(f.Ranges))
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "action: %s\nretryable: %t\ndiagnosticId: %s", e.Action, e.Retryable, e.DiagnosticID)
	if e.Recovery != nil {
		fmt.Fprintf(&b, "\nrecovery: stage %s · remoteAccepted %s · resynchronized %t",
			st.safe(e.Recovery.Stage), e.Recovery.RemoteAccepted, e.Recovery.Resynchronized)
	}
	if len(e.Writable) > 0 {
		b.WriteString("\nwritable: " + st.safe(strings.Join(e.Writable, ", ")))
	}
	if len(e.ReadOnly) > 0 {
		b.WriteString("\nread-only: " + st.safe(strings.Join(e.ReadOnly, ", ")))
	}
	return b.String()
}

// RangesText renders "lines 12-18" for one range and "lines 3-4, 9-12" for
// several; a one-line range is still written start-end so the form never
// varies.
func RangesText(rs []Range) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = strconv.Itoa(r.Start) + "-" + strconv.Itoa(r.End)
	}
	return "lines " + strings.Join(parts, ", ")
}
