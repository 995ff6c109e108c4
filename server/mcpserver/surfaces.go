package mcpserver

import (
	"encoding/json"
	"strings"
)

// Tool names (spec/mcp-tools.md).
const (
	ToolPull   = "notes_pull"
	ToolCommit = "notes_commit"
)

// Normative strings, byte for byte from spec/mcp-tools.md.
const (
	pullDescription = "Write the current notebook into the notebook directory and record the accepted state. " +
		"Omit path or pass an empty string to use the server's notebook directory, which the result reports. " +
		"Edit UTF-8 text files (without U+0000) there between notes_pull and notes_commit; " +
		"notes_commit publishes the changes and incorporates concurrent non-conflicting changes."
	commitDescription = "Publish the caller's changes in the notebook directory and incorporate concurrent non-conflicting changes. " +
		"Omit path or pass an empty string to use the server's notebook directory, which the result reports. " +
		"message must be non-blank UTF-8 without U+0000, at most 16,384 bytes; it is retained in recent internal history only."
	instructionsFormat = "The notebook directory is %s. Call notes_pull, edit UTF-8 text files (without U+0000) there, " +
		"then call notes_commit to publish. Both tools default to that directory; pass path only to address a subdirectory of it."
)

// Property descriptions are ours (the spec fixes the tool descriptions, not
// these); they restate the input rules so a host that shows only the schema
// still tells the model the bounds.
const (
	pathPropDescription = "Optional absolute host path of the notebook directory (1 to 4,096 bytes; may begin with ~/). " +
		"Omit it or pass an empty string for the server's notebook directory. Must be at or below the workspace root."
	messagePropDescription = "Commit message: non-blank UTF-8 without U+0000, at most 16,384 bytes."
)

// pathSets is the normalised configuration advertised on every surface.
type pathSets struct {
	writable []string
	readOnly []string
	ignore   []string // configured ignore patterns (not the built-in set)
}

// ignorePatterns returns the engine's configured ignore patterns, when it
// has any (an engine without ignore rules has none).
func ignorePatterns(eng any) []string {
	if ig, ok := eng.(interface{ IgnorePatterns() []string }); ok {
		return ig.IgnorePatterns()
	}
	return nil
}

// entries renders a set the way every surface names it.
func entries(set []string) string { return strings.Join(set, ", ") }

// sentences returns the sentences appended to the instructions and to both
// tool descriptions, in order writable, read-only, ignored, or "" with no
// set. The read-only sentence ends in the nesting rule when both sets
// exist. Only configured ignore patterns are named: with the built-in set
// alone every surface is unchanged.
func (p pathSets) sentences() string {
	var parts []string
	if len(p.writable) > 0 {
		parts = append(parts, "Writable paths: `"+entries(p.writable)+"`. notes_commit refuses any change elsewhere, "+
			"resets those files, and reports READ_ONLY_PATH; write only under them.")
	}
	if len(p.readOnly) > 0 {
		end := "write elsewhere."
		if len(p.writable) > 0 {
			end = "where the two sets nest, the longest matching entry decides."
		}
		parts = append(parts, "Read-only paths: `"+entries(p.readOnly)+"`. notes_commit refuses any change under them, "+
			"resets those files, and reports READ_ONLY_PATH; "+end)
	}
	if len(p.ignore) > 0 {
		parts = append(parts, "Ignored paths: `"+entries(p.ignore)+"`. They are not part of the notebook: "+
			"notes_pull never writes them and notes_commit never publishes, changes or deletes them.")
	}
	return strings.Join(parts, " ")
}

// withSentences appends the path-set sentences to a base text.
func (p pathSets) withSentences(base string) string {
	if s := p.sentences(); s != "" {
		return base + " " + s
	}
	return base
}

// dirSuffix is what the success text item adds after the directory.
func (p pathSets) dirSuffix() string {
	switch {
	case len(p.writable) > 0 && len(p.readOnly) > 0:
		return " (writable: " + entries(p.writable) + "; read-only: " + entries(p.readOnly) + "; longest match decides)"
	case len(p.writable) > 0:
		return " (writable: " + entries(p.writable) + ")"
	case len(p.readOnly) > 0:
		return " (read-only: " + entries(p.readOnly) + ")"
	}
	return ""
}

func instructions(dir string, p pathSets) string {
	return p.withSentences(strings.Replace(instructionsFormat, "%s", dir, 1))
}

// inputSchema is a closed object schema; the raw form keeps the advertised
// bytes exactly as written here.
func inputSchema(withMessage bool) json.RawMessage {
	props := `"path":{"type":"string","description":` + quote(pathPropDescription) + `}`
	required := ""
	if withMessage {
		props = `"message":{"type":"string","description":` + quote(messagePropDescription) + `},` + props
		required = `,"required":["message"]`
	}
	return json.RawMessage(`{"type":"object","properties":{` + props + `}` + required + `,"additionalProperties":false}`)
}

func quote(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}

// tools returns the two tool definitions.
//
// Annotations: both tools write, so neither is read-only. notes_pull
// rewrites the caller's visible directory, but it only merges the accepted
// state into it (local edits survive, conflicts become blocks), and a
// repeated pull with nothing new changes nothing: not destructive,
// idempotent. notes_commit publishes a new accepted state other agents
// receive; it never discards anyone's text (not destructive), but each call
// can publish again (not idempotent). Both act only on the notebook and its
// store, a closed domain, so openWorldHint is false.
func tools(p pathSets) []tool {
	return []tool{
		{
			Name:        ToolPull,
			Description: p.withSentences(pullDescription),
			InputSchema: inputSchema(false),
			Annotations: toolAnnotations{
				ReadOnlyHint:    false,
				DestructiveHint: false,
				IdempotentHint:  true,
				OpenWorldHint:   false,
			},
		},
		{
			Name:        ToolCommit,
			Description: p.withSentences(commitDescription),
			InputSchema: inputSchema(true),
			Annotations: toolAnnotations{
				ReadOnlyHint:    false,
				DestructiveHint: false,
				IdempotentHint:  false,
				OpenWorldHint:   false,
			},
		},
	}
}
