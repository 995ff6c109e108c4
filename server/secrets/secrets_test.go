package secrets

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/server/secrets/secretstest"
)

var (
	newGen  = secretstest.NewGen
	alnum   = secretstest.Alnum
	upperD  = secretstest.Base32
	urlSafe = secretstest.URLSafe
	b64     = secretstest.Base64
)

// Every rule recognises its format, with the right lines, when the lines
// are added in the middle of a note.
func TestEachFormatIsFound(t *testing.T) {
	seen := map[string]bool{}
	for i, c := range secretstest.Cases(1) {
		t.Run(fmt.Sprintf("%d-%s", i, c.Rule), func(t *testing.T) {
			before := []string{"# notes", "", "some text", ""}
			after := []string{"", "more text"}
			old := strings.Join(append(append([]string{}, before...), after...), "\n") + "\n"
			lines := append(append(append([]string{}, before...), c.Lines...), after...)
			content := strings.Join(lines, "\n") + "\n"
			got := Added([]byte(old), []byte(content))
			if len(got) != 1 {
				t.Fatalf("findings %v, want one", got)
			}
			off := len(before)
			if got[0].Rule != c.Rule || got[0].Start != off+c.Start || got[0].End != off+c.End {
				t.Fatalf("finding %+v, want %s lines %d-%d", got[0], c.Rule, off+c.Start, off+c.End)
			}
			// The same content already in the baseline adds nothing.
			if again := Added([]byte(content), []byte(content+"edit\n")); len(again) != 0 {
				t.Fatalf("unchanged lines matched: %v", again)
			}
			seen[c.Rule] = true
		})
	}
	for _, r := range Rules {
		if !seen[r.Name] {
			t.Errorf("rule %s has no test case", r.Name)
		}
	}
}

// Near misses: a token inside a longer word, a placeholder, AWS's example
// pair, an AWS key ID without a secret, a PEM block without a body or a
// public key are not credentials.
func TestNearMissesAreNotFound(t *testing.T) {
	g := newGen(2)
	cases := []string{
		"xghp_" + g.Str(alnum, 36),
		"ghp_" + g.Str(alnum, 37),
		"ghp_" + strings.Repeat("X", 36),
		"ghp_" + strings.Repeat("0123", 9),
		"aws_access_key_id = " + "AKIA" + "IOSFODNN7" + "EXAMPLE" + "\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY",
		"AKIA" + g.Str(upperD, 16) + " alone, no secret near",
		"AKIA" + g.Str(upperD, 16) + "\ncommit " + hex.EncodeToString([]byte(g.Str(alnum, 20))),
		"-----BEGIN PRIVATE KEY-----\n-----END PRIVATE KEY-----",
		"-----BEGIN PUBLIC KEY-----\n" + g.Str(b64, 64) + "\n-----END PUBLIC KEY-----",
		"pk_live_" + g.Str(alnum, 24),
		"sk_test_" + g.Str(alnum, 24),
		"sk-" + g.Str(alnum, 48),
		"AIza" + g.Str(urlSafe, 34),
	}
	for _, c := range cases {
		if got := Scan([]byte(c + "\n")); len(got) != 0 {
			t.Errorf("%q: found %v", c, got)
		}
	}
}

// Zero detections on the project's own documentation.
func TestNoFalsePositivesInDocs(t *testing.T) {
	files, _ := filepath.Glob("../../docs/*.md")
	files = append(files, "../../README.md")
	if len(files) < 3 {
		t.Fatalf("docs not found: %v", files)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := Scan(data); len(got) != 0 {
			t.Errorf("%s: %v", f, got)
		}
	}
}

// Zero detections on generated notes like the merge corpus's (markdown
// with headings, lists, tables, code fences, hashes and IDs).
func TestNoFalsePositivesInGeneratedNotes(t *testing.T) {
	g := newGen(3)
	words := strings.Fields("the a notebook agent merge line commit pull remote local file note todo done fix check " +
		"test build run deploy review plan idea status next alpha beta server client store pack chunk tree index " +
		"cache retry error result config path user team 1 2 3 42 2026 sk api key token secret aws github slack")
	sentence := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = words[g.R.IntN(len(words))]
		}
		return strings.Join(w, " ")
	}
	total := 0
	for n := range 500 {
		var b strings.Builder
		for range 5 + g.R.IntN(20) {
			switch g.R.IntN(6) {
			case 0:
				fmt.Fprintf(&b, "## %s\n", sentence(3))
			case 1:
				fmt.Fprintf(&b, "- [ ] %s\n- [x] %s\n", sentence(5), sentence(4))
			case 2:
				fmt.Fprintf(&b, "| %s | %s |\n| --- | --- |\n| %s | %s |\n", sentence(1), sentence(1), sentence(2), sentence(2))
			case 3:
				fmt.Fprintf(&b, "```go\nfunc %s() error { return nil } // %s\n```\n", words[g.R.IntN(len(words))], sentence(3))
			case 4:
				fmt.Fprintf(&b, "commit %s, pack %s, run %s\n", hex.EncodeToString([]byte(g.Str(alnum, 20))), g.Str("0123456789abcdef", 64), g.Str(alnum, 12))
			default:
				fmt.Fprintf(&b, "%s.\n", sentence(12))
			}
			b.WriteString("\n")
		}
		if got := Scan([]byte(b.String())); len(got) != 0 {
			t.Fatalf("note %d: %v\n%s", n, got, b.String())
		}
		total++
	}
	t.Logf("%d generated notes, 0 detections", total)
}

// Zero detections on 10,000 random hex IDs, UUIDs and base64 blobs.
func TestNoFalsePositivesInRandomIDs(t *testing.T) {
	g := newGen(4)
	var b strings.Builder
	for i := range 10000 {
		raw := []byte(g.Str(alnum, 8+g.R.IntN(56)))
		switch i % 4 {
		case 0:
			b.WriteString(hex.EncodeToString(raw))
		case 1:
			u := hex.EncodeToString([]byte(g.Str(alnum, 16)))
			fmt.Fprintf(&b, "%s-%s-%s-%s-%s", u[:8], u[8:12], u[12:16], u[16:20], u[20:32])
		case 2:
			b.WriteString(base64.StdEncoding.EncodeToString(raw))
		default:
			b.WriteString(base64.RawURLEncoding.EncodeToString(raw))
		}
		b.WriteString("\n")
	}
	if got := Scan([]byte(b.String())); len(got) != 0 {
		t.Fatalf("%d detections, first %v", len(got), got[0])
	}
}

// Only added lines count: a line moved within the file, or present as
// often as before, is not added.
func TestOnlyAddedLines(t *testing.T) {
	c := secretstest.Cases(5)[2] // a GitHub token
	tok := c.Lines[0]
	old := "a\n" + tok + "\nb\n"
	moved := "b\na\n" + tok + "\n"
	if got := Added([]byte(old), []byte(moved)); len(got) != 0 {
		t.Fatalf("a moved line was taken as added: %v", got)
	}
	twice := old + tok + "\n"
	if got := Added([]byte(old), []byte(twice)); len(got) != 1 || got[0].Start != 4 {
		t.Fatalf("a second copy: %v", got)
	}
}

func BenchmarkAddedNoSecret(b *testing.B) {
	g := newGen(6)
	var sb strings.Builder
	for range 1000 {
		sb.WriteString(g.Str(alnum+"    ", 60) + "\n")
	}
	content := []byte(sb.String())
	b.SetBytes(int64(len(content)))
	for b.Loop() {
		Added(nil, content)
	}
}
