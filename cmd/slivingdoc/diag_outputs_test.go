package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/mcpserver"
)

// secretEngine fails every call with an error whose every text carries s.
type secretEngine struct{ dir, s string }

func (e secretEngine) PathSets() ([]string, []string)         { return nil, nil }
func (e secretEngine) ResolveDir(path string) (string, error) { return e.dir, nil }
func (e secretEngine) Pull(context.Context, string) (*server.Result, error) {
	return nil, &diag.Error{Code: diag.CodeEngineFailed, Reason: diag.ReasonInternal, Action: diag.ActionCheckHost,
		Message: "engine says " + e.s, Detail: "detail " + e.s, Cause: errors.New("cause " + e.s)}
}
func (e secretEngine) Commit(context.Context, string, string) (*server.Result, error) {
	return nil, &diag.Error{Code: diag.CodeRecoveryFailure, Reason: diag.ReasonRecoveryPending, Action: diag.ActionCheckHost,
		Message: "recovery says " + e.s, Cause: errors.New("cause " + e.s),
		Recovery: &diag.Recovery{Stage: "stage " + e.s, RemoteAccepted: "yes"}}
}

// One table of secret-bearing strings through every output the process
// has: the MCP result (text item and structured error) and the adapter's
// log records, the CLI's error report and its log record, the slog
// handler, and verify's report in both formats. Each output goes through
// server/diag's one policy; none may show the secret.
func TestNoOutputShowsASecret(t *testing.T) {
	priv := "/home/someone/.cache/slivingdoc-private-root"
	const secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	redactPath(priv)
	redactPath(secret)
	cases := []struct{ name, s, forbidden string }{
		{"access key ID", "AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"},
		{"temporary access key ID", "ASIAY34FZKBOKMUTVV7A", "ASIAY34FZKBOKMUTVV7A"},
		{"64-hex object ID", strings.Repeat("ab", 32), strings.Repeat("ab", 32)},
		{"40-hex identifier", strings.Repeat("c", 40), strings.Repeat("c", 40)},
		{"increment pack key", "packs/increments/7-0193a4b2-7c1d-7e2f-8a9b-0c1d2e3f4a5b.pack", "0193a4b2-7c1d-7e2f-8a9b-0c1d2e3f4a5b"},
		{"checkpoint pack key", "packs/checkpoints/9-0193a4b2-7c1d-7e2f-8a9b-0c1d2e3f4a5c.pack", "0193a4b2-7c1d-7e2f-8a9b-0c1d2e3f4a5c"},
		{"probe key", "probe/0193a4b2-7c1d-7e2f-8a9b-0c1d2e3f4a5d", "0193a4b2-7c1d-7e2f-8a9b-0c1d2e3f4a5d"},
		{"URL user info", "s3://someuser:hunter2pw@bucket.example/p", "hunter2pw"},
		{"private path", priv + "/dirs/x/lock", priv},
		{"secret value", "token=" + secret, secret},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			outputs := map[string]string{}

			// MCP: both error shapes, over the adapter's real transport.
			var mcpLog bytes.Buffer
			a, err := mcpserver.New(secretEngine{dir: "/nb", s: c.s}, mcpserver.Options{Version: "1.0.0",
				Logger: newLogger(&mcpLog), Scrubber: procScrub})
			if err != nil {
				t.Fatal(err)
			}
			cr, sw := io.Pipe()
			sr, cw := io.Pipe()
			done := make(chan error, 1)
			go func() { done <- a.Serve(context.Background(), sr, sw); sw.Close() }()
			cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "0"}, nil).
				Connect(context.Background(), &sdk.IOTransport{Reader: cr, Writer: cw}, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, tool := range []struct{ name, args string }{{ToolPullName, `{}`}, {ToolCommitName, `{"message":"m"}`}} {
				res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool.name, Arguments: json.RawMessage(tool.args)})
				if err != nil {
					t.Fatal(err)
				}
				if !res.IsError {
					t.Fatalf("%s succeeded", tool.name)
				}
				sc, _ := json.Marshal(res.StructuredContent)
				outputs["MCP "+tool.name+" structured"] = string(sc)
				outputs["MCP "+tool.name+" text"] = res.Content[0].(*sdk.TextContent).Text
			}
			cs.Close()
			cw.Close()
			<-done
			outputs["MCP log records"] = mcpLog.String()

			// The CLI's report and its log record.
			var report, cliLog bytes.Buffer
			reportError(&report, newLogger(&cliLog), "pull", secretEngine{s: c.s}.pullErr(), nil, nil)
			outputs["CLI report"] = report.String()
			outputs["CLI log record"] = cliLog.String()
			report.Reset()
			reportError(&report, nil, "commit", errors.New("unclassified "+c.s), nil, nil)
			outputs["CLI report of an unclassified error"] = report.String()

			// The slog handler: message, string, error and group attributes.
			var logBuf bytes.Buffer
			newLogger(&logBuf).With("store", c.s).Error("failed "+c.s, "err", errors.New(c.s), "group", map[string]string{"k": c.s})
			outputs["slog handler"] = logBuf.String()

			// verify, both formats, and the usage error text.
			rep := &remote.Report{Findings: []remote.Finding{{Code: "PACK_MISSING", Key: "current", Detail: "detail " + c.s}}}
			var v bytes.Buffer
			printVerify(&v, "file:///store", rep)
			outputs["verify"] = v.String()
			j, _ := json.Marshal(toJSON("file:///store", rep))
			outputs["verify --json"] = string(j)
			outputs["usage error"] = scrubText("bad setting " + c.s)

			if len(outputs) != 12 {
				t.Fatalf("%d outputs", len(outputs))
			}
			for name, out := range outputs {
				if out == "" {
					t.Errorf("%s: empty (the output was not produced)", name)
				}
				if strings.Contains(out, c.forbidden) {
					t.Errorf("%s shows %q:\n%s", name, c.forbidden, out)
				}
			}
		})
	}
}

func (e secretEngine) pullErr() error { _, err := e.Pull(context.Background(), ""); return err }
