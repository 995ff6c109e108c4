package mcpserver

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/slivingdoc/slivingdoc/merge"
	"github.com/slivingdoc/slivingdoc/server"
	"github.com/slivingdoc/slivingdoc/server/diag"
)

func compact(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The spec's two examples, field for field and in the spec's order.
func TestEnvelopeMatchesSpecExamples(t *testing.T) {
	ok := newOK(&server.Result{
		Path:       "/tmp/slivingdoc-7f3a1c/notebook",
		Generation: 18,
		Files: []server.FileStat{
			{Path: "notes/a.md", Insertions: 1, Deletions: 1},
			{Path: "notes/c.md", Insertions: 2},
			{Path: "archive/old.md", Deletions: 3},
		},
	}, pathSets{readOnly: []string{"docs", "faq.md"}})
	wantOK := `{"code":"OK","path":"/tmp/slivingdoc-7f3a1c/notebook","generation":18,"filesChanged":3,"insertions":3,"deletions":4,
	  "files":[{"path":"notes/a.md","insertions":1,"deletions":1},{"path":"notes/c.md","insertions":2,"deletions":0},{"path":"archive/old.md","insertions":0,"deletions":3}],
	  "readOnly":["docs","faq.md"],"writable":[]}`
	if got := marshal(t, ok); got != compact(t, wantOK) {
		t.Errorf("success object\n got %s\nwant %s", got, compact(t, wantOK))
	}

	e := newErr(&diag.Error{
		Code: diag.CodeContentConflict, Reason: diag.ReasonMergeConflict, Action: diag.ActionEditFiles,
		Message: "Resolve the conflict blocks before notes_commit.",
		Files:   []diag.FileError{{Path: "notes/today.md", Reason: string(merge.TextConflict), Ranges: []merge.Range{{Start: 12, End: 18}}}},
	}, "0011223344556677", pathSets{}, diag.NewScrubber())
	wantErr := `{"code":"CONTENT_CONFLICT","reason":"MERGE_CONFLICT","action":"EDIT_FILES","diagnosticId":"0011223344556677","retryable":false,
	  "message":"Resolve the conflict blocks before notes_commit.",
	  "files":[{"path":"notes/today.md","reason":"TEXT_CONFLICT","ranges":[{"start":12,"end":18}]}],"readOnly":[],"writable":[]}`
	if got := marshal(t, e); got != compact(t, wantErr) {
		t.Errorf("error object\n got %s\nwant %s", got, compact(t, wantErr))
	}
	wantText := "CONTENT_CONFLICT · MERGE_CONFLICT\n" +
		"Resolve the conflict blocks before notes_commit.\n" +
		"file: notes/today.md · TEXT_CONFLICT · lines 12-18\n" +
		"action: EDIT_FILES\n" +
		"retryable: false\n" +
		"diagnosticId: 0011223344556677"
	if got := errText(e); got != wantText {
		t.Errorf("error text\n got %q\nwant %q", got, wantText)
	}
}

func TestEnvelopeOptionalParts(t *testing.T) {
	sets := pathSets{writable: []string{"notes"}, readOnly: []string{"notes/fixed"}}
	e := newErr(&diag.Error{
		Code: diag.CodeRecoveryFailure, Reason: diag.ReasonResynchronized, Action: diag.ActionPull, Retryable: true,
		Message:  "Pull again.",
		Detail:   "disk full", // not ENGINE_FAILED: must be dropped
		Files:    []diag.FileError{{Path: "a.md", Reason: string(merge.ModifyDelete)}, {Path: "b.md", Reason: string(merge.TextConflict), Ranges: []merge.Range{{Start: 1, End: 3}, {Start: 9, End: 9}}}},
		Recovery: &diag.Recovery{Stage: "rewrite", RemoteAccepted: "yes", Resynchronized: true},
	}, "89abcdef01234567", sets, diag.NewScrubber())
	if e.Detail != "" {
		t.Errorf("detail %q on %s", e.Detail, e.Code)
	}
	if e.Recovery == nil || *e.Recovery != (diag.Recovery{Stage: "rewrite", RemoteAccepted: "yes", Resynchronized: true}) {
		t.Errorf("recovery = %+v", e.Recovery)
	}
	if len(e.Files[0].Ranges) != 0 || e.Files[0].Ranges == nil {
		t.Errorf("a file without ranges must carry an empty array, got %#v", e.Files[0].Ranges)
	}
	want := "RECOVERY_FAILURE · RESYNCHRONIZED\nPull again.\n" +
		"file: a.md · MODIFY_DELETE\n" +
		"file: b.md · TEXT_CONFLICT · lines 1-3, 9-9\n" +
		"action: PULL\nretryable: true\ndiagnosticId: 89abcdef01234567\n" +
		"recovery: stage rewrite · remoteAccepted yes · resynchronized true\n" +
		"writable: notes\nread-only: notes/fixed"
	if got := errText(e); got != want {
		t.Errorf("text\n got %q\nwant %q", got, want)
	}

	d := newErr(&diag.Error{Code: diag.CodeEngineFailed, Reason: diag.ReasonLocalIO, Action: diag.ActionCheckHost,
		Retryable: true, Message: "A local file operation failed.", Detail: "disk full"}, "0000000000000000", pathSets{}, diag.NewScrubber())
	if d.Detail != "disk full" {
		t.Errorf("ENGINE_FAILED detail = %q", d.Detail)
	}
	if got, want := errText(d), "ENGINE_FAILED · LOCAL_IO\nA local file operation failed.\ndetail: disk full\naction: CHECK_HOST\nretryable: true\ndiagnosticId: 0000000000000000"; got != want {
		t.Errorf("text\n got %q\nwant %q", got, want)
	}
	if b := marshal(t, d); bytes.Contains([]byte(b), []byte(`"recovery"`)) {
		t.Errorf("recovery present outside RECOVERY_FAILURE: %s", b)
	}
}

// An engine error that forgot its tokens still gives the agent a reason,
// an action and a message from the catalog.
func TestEnvelopeCompletesMissingTokens(t *testing.T) {
	e := newErr(&diag.Error{Code: diag.CodeRemoteBusy, Files: []diag.FileError{{Path: "x"}}}, "0000000000000000", pathSets{}, diag.NewScrubber())
	if e.Reason != diag.ReasonRetriesExhausted || e.Action != string(diag.ActionRetry) || !e.Retryable || e.Message == "" {
		t.Fatalf("got %+v", e)
	}
	if e.Files[0].Reason != diag.ReasonRetriesExhausted {
		t.Fatalf("file reason %q", e.Files[0].Reason)
	}
	u := newErr(&diag.Error{}, "0000000000000000", pathSets{}, diag.NewScrubber())
	if u.Code != string(diag.CodeEngineFailed) || u.Reason != diag.ReasonInternal || u.Action != string(diag.ActionCheckHost) {
		t.Fatalf("got %+v", u)
	}
}

func TestEnvelopeScrubsDiagnosticText(t *testing.T) {
	e := newErr(&diag.Error{Code: diag.CodeEngineFailed, Reason: diag.ReasonInternal, Action: diag.ActionCheckHost,
		Message: "read packs/increments/3-0190f1a2-7c3b-7def-8abc-0123456789ab.pack under /priv/root",
		Detail:  "AKIAIOSFODNN7EXAMPLE"}, "0000000000000000", pathSets{}, diag.NewScrubber("/priv/root"))
	if e.Message != "read <pack> under <private>" || e.Detail != "<access-key>" {
		t.Fatalf("message %q detail %q", e.Message, e.Detail)
	}
}
