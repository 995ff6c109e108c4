package mcpserver

import (
	"encoding/json"
	"strings"

	"github.com/slivingdoc/slivingdoc/internal/noinit"
	"github.com/slivingdoc/slivingdoc/server/diag"
)

// outputSchema is both tools' advertised outputSchema. It describes the
// success object (spec/mcp-tools.md, "The success result") and, as a second
// alternative, the structured error: MCP clients validate structuredContent
// against outputSchema whenever it is present, isError or not (the
// TypeScript SDK's client does), so a schema of the success object alone
// would make every domain error a client-side validation failure.
//
// Codes, reasons, actions and file reasons are enums of exactly the tokens
// of diag.Catalog (diag.CatalogTokens), not a looser pattern: a
// pattern once excluded a token the server emits (INVALID_UTF8 has a
// digit), and clients that validate turned that domain error into a
// protocol error. A new row in the catalogue changes the advertised
// schema; testdata/outputschema.json snapshots it.
//
// Built when serve builds its adapter, not at package init: every CLI
// process links this package, and only serve advertises tools.
func outputSchema() json.RawMessage {
	return outputSchemaOnce.Get(func() json.RawMessage {
		return compactJSON(withTokens(outputSchemaSource, diag.CatalogTokens()))
	})
}

var outputSchemaOnce noinit.Lazy[json.RawMessage]

const outputSchemaSource = `{
  "type": "object",
  "anyOf": [
    {
      "description": "Success.",
      "properties": {
        "code": {"const": "OK"},
        "path": {"type": "string", "description": "The resolved notebook directory the operation ran against."},
        "generation": {"type": "integer", "minimum": 0, "description": "The accepted remote generation after the operation."},
        "filesChanged": {"type": "integer", "minimum": 0},
        "insertions": {"type": "integer", "minimum": 0},
        "deletions": {"type": "integer", "minimum": 0},
        "files": {"type": "array", "items": {
          "type": "object",
          "properties": {
            "path": {"type": "string"},
            "insertions": {"type": "integer", "minimum": 0},
            "deletions": {"type": "integer", "minimum": 0}
          },
          "required": ["path", "insertions", "deletions"],
          "additionalProperties": false
        }},
        "readOnly": {"type": "array", "items": {"type": "string"}},
        "writable": {"type": "array", "items": {"type": "string"}}
      },
      "required": ["code", "path", "generation", "filesChanged", "insertions", "deletions", "files", "readOnly", "writable"],
      "additionalProperties": false
    },
    {
      "description": "A domain error (isError is true).",
      "properties": {
        "code": {"type": "string", "enum": @CODES@},
        "reason": {"type": "string", "enum": @REASONS@},
        "action": {"type": "string", "enum": @ACTIONS@},
        "diagnosticId": {"type": "string", "pattern": "^[0-9a-f]{16}$"},
        "retryable": {"type": "boolean"},
        "message": {"type": "string"},
        "detail": {"type": "string"},
        "files": {"type": "array", "items": {
          "type": "object",
          "properties": {
            "path": {"type": "string"},
            "reason": {"type": "string", "enum": @FILE_REASONS@},
            "ranges": {"type": "array", "items": {
              "type": "object",
              "properties": {"start": {"type": "integer", "minimum": 1}, "end": {"type": "integer", "minimum": 1}},
              "required": ["start", "end"],
              "additionalProperties": false
            }}
          },
          "required": ["path", "reason", "ranges"],
          "additionalProperties": false
        }},
        "recovery": {
          "type": "object",
          "properties": {
            "stage": {"type": "string"},
            "remoteAccepted": {"enum": ["yes", "no", "unknown"]},
            "resynchronized": {"type": "boolean"}
          },
          "required": ["stage", "remoteAccepted", "resynchronized"],
          "additionalProperties": false
        },
        "readOnly": {"type": "array", "items": {"type": "string"}},
        "writable": {"type": "array", "items": {"type": "string"}}
      },
      "required": ["code", "reason", "action", "diagnosticId", "retryable", "message", "files", "readOnly", "writable"],
      "additionalProperties": false
    }
  ]
}`

// withTokens puts the catalogue's tokens into the schema's enums.
func withTokens(schema string, t diag.Tokens) string {
	list := func(s []string) string {
		b, _ := json.Marshal(s)
		return string(b)
	}
	return strings.NewReplacer("@CODES@", list(t.Codes), "@REASONS@", list(t.Reasons),
		"@ACTIONS@", list(t.Actions), "@FILE_REASONS@", list(t.FileReasons)).Replace(schema)
}

// compactJSON keeps the source readable and the advertised bytes compact.
func compactJSON(s string) []byte {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		panic("mcpserver: outputSchema: " + err.Error())
	}
	b, _ := json.Marshal(v) // sorted keys: the advertised bytes are stable
	return b
}

// OutputSchema is the advertised outputSchema, for tests that validate
// results against it.
func OutputSchema() json.RawMessage { return outputSchema() }
