package mcpserver

import (
	"os"
	"regexp"
	"sort"
	"testing"
)

// docs/mcp-tools.md quotes the descriptions, instructions and sentences
// the server sends; each quote (a fenced block after "<!-- quote: NAME -->")
// must be exactly what this package generates, and every generated text
// must be quoted.
func TestMCPToolsDocQuotesTheCode(t *testing.T) {
	b, err := os.ReadFile("../../docs/mcp-tools.md")
	if err != nil {
		t.Fatal(err)
	}
	both := pathSets{writable: []string{"<writable>"}, readOnly: []string{"<read-only>"}}
	want := map[string]string{
		"notes_pull description":   tools(pathSets{})[0].Description,
		"notes_commit description": tools(pathSets{})[1].Description,
		"instructions":             instructions("<dir>", pathSets{}),
		"writable sentence":        pathSets{writable: []string{"<entries>"}}.sentences(),
		"read-only sentence":       pathSets{readOnly: []string{"<entries>"}}.sentences(),
		"both sets":                both.sentences(),
		"ignored sentence":         pathSets{ignore: []string{"<entries>"}}.sentences(),
	}
	if tools(pathSets{})[0].Name != ToolPull || tools(pathSets{})[1].Name != ToolCommit {
		t.Fatal("tool order changed")
	}
	quote := regexp.MustCompile("(?s)<!-- quote: ([^>]+?) -->\n```text\n(.*?)\n```")
	got := map[string]string{}
	for _, m := range quote.FindAllStringSubmatch(string(b), -1) {
		if _, dup := got[m[1]]; dup {
			t.Errorf("quote %q appears twice", m[1])
		}
		got[m[1]] = m[2]
	}
	var names []string
	for name := range want {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		switch g, ok := got[name]; {
		case !ok:
			t.Errorf("docs/mcp-tools.md does not quote %q", name)
		case g != want[name]:
			t.Errorf("docs/mcp-tools.md quotes %q as\n%s\nthe server sends\n%s", name, g, want[name])
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("docs/mcp-tools.md quotes %q, which this test does not know", name)
		}
	}
}
