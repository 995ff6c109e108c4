package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/slivingdoc/slivingdoc/merge"
	"github.com/slivingdoc/slivingdoc/server"
	"github.com/slivingdoc/slivingdoc/server/diag"
)

const schemaSnapshot = "testdata/outputschema.json"

// TestOutputSchemaSnapshot pins the advertised outputSchema: a change to it
// (a new catalogue row is one) shows up as a diff of the snapshot
// (go test ./server/mcpserver -run OutputSchemaSnapshot -update rewrites it).
func TestOutputSchemaSnapshot(t *testing.T) {
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, outputSchema(), "", "  "); err != nil {
		t.Fatal(err)
	}
	pretty.WriteByte('\n')
	if *update {
		if err := os.WriteFile(schemaSnapshot, pretty.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(schemaSnapshot)
	if err != nil {
		t.Fatalf("%v (run with -update to generate it)", err)
	}
	if !bytes.Equal(got, pretty.Bytes()) {
		t.Fatalf("the advertised outputSchema differs from %s; review the change, then run go test ./server/mcpserver -run OutputSchemaSnapshot -update", schemaSnapshot)
	}
}

// The error alternative's enums are exactly the catalogue's tokens: every
// token the catalogue holds validates, and nothing else does.
func TestOutputSchemaEnumsAreTheCatalogue(t *testing.T) {
	var s struct {
		AnyOf []struct {
			Properties struct {
				Code, Reason, Action struct{ Enum []string }
				Files                struct {
					Items struct {
						Properties struct{ Reason struct{ Enum []string } }
					}
				}
			}
		}
	}
	if err := json.Unmarshal(outputSchema(), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.AnyOf) != 2 {
		t.Fatalf("%d alternatives", len(s.AnyOf))
	}
	p := s.AnyOf[1].Properties
	tok := diag.CatalogTokens()
	for _, c := range []struct {
		name      string
		got, want []string
	}{
		{"code", p.Code.Enum, tok.Codes},
		{"reason", p.Reason.Enum, tok.Reasons},
		{"action", p.Action.Enum, tok.Actions},
		{"files[].reason", p.Files.Items.Properties.Reason.Enum, tok.FileReasons},
	} {
		if len(c.want) == 0 || !slices.Equal(c.got, c.want) {
			t.Errorf("%s enum %v, catalogue %v", c.name, c.got, c.want)
		}
	}
	// Spot checks of tokens that once failed a pattern or are easy to forget.
	for _, want := range []string{"INVALID_UTF8", "SECRET", "SECRET_IN_NAME", "CONFLICT_MARKERS", "FILE_DIRECTORY"} {
		if !slices.Contains(tok.FileReasons, want) {
			t.Errorf("file reason %s missing from the catalogue", want)
		}
	}
	if !slices.Contains(tok.Reasons, "SECRET_IN_MESSAGE") {
		t.Error("reason SECRET_IN_MESSAGE missing from the catalogue")
	}
}

// Every row of the catalogue, with each of its file reasons, builds an
// envelope that validates against the advertised schema (a real JSON
// Schema validator, the one the Go SDK uses).
func TestEveryCatalogueRowValidates(t *testing.T) {
	var sc jsonschema.Schema
	if err := json.Unmarshal(outputSchema(), &sc); err != nil {
		t.Fatal(err)
	}
	res, err := sc.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range diag.Catalog {
		e := &diag.Error{Code: row.Code, Reason: row.Reason, Action: row.Action, Retryable: row.Retryable, Message: row.Meaning}
		for _, f := range row.FileReasons {
			e.Files = append(e.Files, diag.FileError{Path: "a/" + f + ".md", Reason: f, Ranges: []merge.Range{{Start: 1, End: 2}}})
		}
		if row.Code == diag.CodeRecoveryFailure {
			e.Recovery = &diag.Recovery{Stage: "rewrite", RemoteAccepted: "unknown"}
		}
		if row.Code == diag.CodeEngineFailed {
			e.Detail = diag.DetailDiskFull
		}
		env := newErr(e, "0011223344556677", pathSets{}, diag.NewScrubber())
		b, _ := json.Marshal(env)
		var v any
		_ = json.Unmarshal(b, &v)
		if err := res.Validate(v); err != nil {
			t.Errorf("%s/%s: %v\n%s", row.Code, row.Reason, err, b)
		}
	}
	// And a token outside the catalogue does not.
	env := newErr(&diag.Error{Code: diag.CodeInvalidContent, Reason: "NOT_A_REASON", Action: diag.ActionFixFiles}, "0011223344556677", pathSets{}, diag.NewScrubber())
	b, _ := json.Marshal(env)
	var v any
	_ = json.Unmarshal(b, &v)
	if res.Validate(v) == nil {
		t.Errorf("an unknown reason validates: %s", b)
	}
}

// A token missing from the catalogue never reaches a client, whose schema
// validation would turn the domain error into a protocol error: the result
// is ENGINE_FAILED/INTERNAL, and the log names the token to add.
func TestUncataloguedTokenBecomesInternal(t *testing.T) {
	for _, e := range []*diag.Error{
		{Code: diag.CodeInvalidContent, Reason: "NEW_REASON", Action: diag.ActionFixFiles, Message: "m"},
		{Code: diag.CodeInvalidContent, Reason: diag.ReasonInvalidFiles, Action: diag.ActionFixFiles, Message: "m",
			Files: []diag.FileError{{Path: "a.md", Reason: "NEW_FILE_REASON"}}},
		{Code: "NEW_CODE", Reason: diag.ReasonInternal, Action: diag.ActionCheckHost, Message: "m"},
	} {
		eng := &fakeEngine{dir: "/w", pull: func(context.Context, string) (*server.Result, error) { return nil, e }}
		cs, logs := connect(t, eng)
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: ToolPull})
		if err != nil {
			t.Fatal(err)
		}
		sc := structured(t, res)
		if !res.IsError || sc["code"] != "ENGINE_FAILED" || sc["reason"] != "INTERNAL" || len(sc["files"].([]any)) != 0 {
			t.Fatalf("%+v: %v", e, sc)
		}
		if !strings.Contains(logs.String(), "uncatalogued token") {
			t.Fatalf("no log record names the token: %s", logs.String())
		}
	}
}
