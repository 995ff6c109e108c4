package mcpserver

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/server/diag"
)

var update = flag.Bool("update", false, "rewrite docs/errors.md from diag.Catalog")

const errorsDocPath = "../../docs/errors.md"

// TestErrorsDocMatchesCatalog keeps docs/errors.md the single reference:
// it is generated from diag.Catalog, and this test fails when the two
// disagree (go test ./server/mcpserver -run ErrorsDoc -update rewrites it).
func TestErrorsDocMatchesCatalog(t *testing.T) {
	want := renderErrorsDoc()
	if *update {
		if err := os.WriteFile(errorsDocPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(errorsDocPath)
	if err != nil {
		t.Fatalf("%v (run with -update to generate it)", err)
	}
	if string(got) != want {
		t.Fatalf("%s disagrees with diag.Catalog; run go test ./server/mcpserver -run ErrorsDoc -update", filepath.Clean(errorsDocPath))
	}
}

// Every row must be complete: the spec promises a non-empty reason and
// action on every error and a non-empty reason on every file entry.
func TestCatalogRowsComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range diag.Catalog {
		key := string(r.Code) + "/" + r.Reason
		if r.Code == "" || r.Reason == "" || r.Action == "" || r.Meaning == "" {
			t.Errorf("incomplete row %+v", r)
		}
		if seen[key] {
			t.Errorf("duplicate row %s", key)
		}
		seen[key] = true
		if actionHelp[r.Action] == "" {
			t.Errorf("%s: action %s has no explanation in actionHelp", key, r.Action)
		}
		for _, f := range r.FileReasons {
			if f == "" {
				t.Errorf("%s: empty file reason", key)
			}
		}
	}
}

func renderErrorsDoc() string {
	var b strings.Builder
	b.WriteString(`# Errors

<!-- Generated from diag.Catalog by server/mcpserver/errorsdoc_test.go;
     edit the catalog, then: go test ./server/mcpserver -run ErrorsDoc -update -->

Every domain error of ` + "`notes_pull`" + `, ` + "`notes_commit`" + ` and the CLI carries a stable
` + "`code`" + `, a stable ` + "`reason`" + ` one level below it, a stable ` + "`action`" + ` naming the
caller's next step, and a ` + "`retryable`" + ` verdict. File entries carry their own stable
` + "`reason`" + `. Branch on these tokens; message text can change between releases.

Over MCP an error is a tool result with ` + "`isError: true`" + `, one text item and this
structured object (fields in this order; see [mcp-tools.md](mcp-tools.md)):

| field | presence | meaning |
| --- | --- | --- |
| ` + "`code`" + ` | always | the category (first column below) |
| ` + "`reason`" + ` | always | the row's reason |
| ` + "`action`" + ` | always | the next step |
| ` + "`diagnosticId`" + ` | always | 16 lowercase hex, fresh per call; the server's start and completion log records of the call carry it as ` + "`mcpReqID`" + ` |
| ` + "`retryable`" + ` | always | whether the same call can succeed later |
| ` + "`message`" + ` | always | human-readable text |
| ` + "`detail`" + ` | ` + "`ENGINE_FAILED`" + ` only | a fixed description of a cause the engine classified (e.g. ` + "`disk full`" + `); absent for unrecognised causes, whose full text is in the log record |
| ` + "`files`" + ` | always | ` + "`path`" + ` (relative to the request directory, slash form), ` + "`reason`" + `, ` + "`ranges`" + ` (one-based inclusive line ranges, possibly empty); empty array when the error is not about files |
| ` + "`recovery`" + ` | ` + "`RECOVERY_FAILURE`" + ` only | ` + "`stage`" + `, ` + "`remoteAccepted`" + ` (` + "`yes`" + `/` + "`no`" + `/` + "`unknown`" + `), ` + "`resynchronized`" + ` |
| ` + "`readOnly`" + `, ` + "`writable`" + ` | always | the server's normalised path sets |

The text item repeats all of it:

` + "```text" + `
CONTENT_CONFLICT · MERGE_CONFLICT
Resolve the conflict blocks before notes_commit.
file: notes/today.md · TEXT_CONFLICT · lines 12-18
action: EDIT_FILES
retryable: false
diagnosticId: 0011223344556677
` + "```" + `

followed, when present, by ` + "`detail: …`" + ` (after the message), one ` + "`file:`" + ` line per
file (` + "`lines a-b, c-d`" + ` when it has ranges), and after the diagnostic ID
` + "`recovery: stage … · remoteAccepted … · resynchronized …`" + `, ` + "`writable: …`" + ` and
` + "`read-only: …`" + `.

Two documented exceptions to the rules above, both about secrets (see
` + "`docs/secrets.md`" + `):

- ` + "`files[].path`" + ` is the caller's path as it is, except for a new file or
  directory name that holds a recognised credential: the path is reported
  with each credential replaced by ` + "`[secret]`" + ` (e.g. ` + "`[secret].md`" + `), with the
  file reason ` + "`SECRET_IN_NAME`" + `, so the secret is never echoed.
- ` + "`INVALID_CONTENT`" + ` is about files, except for ` + "`SECRET_IN_MESSAGE`" + `: the commit
  message holds a recognised credential, and ` + "`files`" + ` is empty.

Not domain errors: a cancelled request and a malformed JSON-RPC message are
protocol errors. A store that does not enforce conditional writes found at
startup is the startup-only ` + "`INCOMPATIBLE_STORE`" + ` diagnostic: ` + "`slivingdoc serve`" + `
prints it on stderr and exits 1, so it never appears in a result; the
` + "`STORAGE_FAILURE`" + `/` + "`INCOMPATIBLE_STORE`" + ` row below is the same finding when the
engine re-proves the store during a session.

## The table

`)
	b.WriteString("| code | reason | action | retryable | file reasons | meaning |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- |\n")
	for _, r := range diag.Catalog {
		files := "—"
		if len(r.FileReasons) > 0 {
			files = "`" + strings.Join(r.FileReasons, "`, `") + "`"
		}
		retry := "no"
		if r.Retryable {
			retry = "yes"
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | `%s` | %s | %s | %s |\n", r.Code, r.Reason, r.Action, retry, files, r.Meaning)
	}
	b.WriteString("\n## `detail` values of `ENGINE_FAILED`\n\nThe closed set a classified local failure reports:\n\n")
	for _, d := range diag.LocalIODetails {
		fmt.Fprintf(&b, "- `%s`\n", d)
	}
	b.WriteString("\n## Actions\n\n| action | what the caller does |\n| --- | --- |\n")
	done := map[diag.Action]bool{}
	for _, r := range diag.Catalog {
		if !done[r.Action] {
			done[r.Action] = true
			fmt.Fprintf(&b, "| `%s` | %s |\n", r.Action, actionHelp[r.Action])
		}
	}
	return b.String()
}

// actionHelp explains each action token in docs/errors.md.
var actionHelp = map[diag.Action]string{
	diag.ActionFixRequest:     "correct the arguments and call again",
	diag.ActionPullFirst:      "call `notes_pull` for that directory, then commit",
	diag.ActionFixFiles:       "rename, convert or remove the files listed, then commit",
	diag.ActionEditFiles:      "resolve the conflict blocks at the listed ranges, then commit",
	diag.ActionWriteElsewhere: "the listed files were reset; make the change in a writable place",
	diag.ActionRetry:          "call again (nothing was lost; a retry never duplicates changes)",
	diag.ActionCheckStore:     "fix credentials, bucket or permissions of the store",
	diag.ActionRunVerify:      "run `slivingdoc verify` and repair the store",
	diag.ActionCheckHost:      "fix the local machine (disk, permissions); the log has the cause",
	diag.ActionPull:           "call `notes_pull`; the directory is (or will be) resynchronised",
}
