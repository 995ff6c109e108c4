package archdoc_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// repoFiles returns the module's files with one of the extensions,
// relative to the module root, leaving out what is not the project's
// (node_modules, build output, testdata: data kept as it was found).
func repoFiles(t *testing.T, exts ...string) []string {
	t.Helper()
	root := filepath.Join("..", "..")
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "bin", "dist", "testdata": // testdata: data kept as found, e.g. a corpus of others' docs
				return filepath.SkipDir
			}
			return nil
		}
		for _, e := range exts {
			if strings.HasSuffix(p, e) {
				rel, err := filepath.Rel(root, p)
				if err != nil {
					return err
				}
				out = append(out, filepath.ToSlash(rel))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("no %v files found", exts)
	}
	return out
}

func read(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var (
	mdLink  = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *$`)
	fence   = regexp.MustCompile("(?ms)^```.*?^```")
	// A docs/ page named in code, help text or prose.
	docsRef = regexp.MustCompile(`\bdocs/[A-Za-z0-9_-]+\.md\b`)
	// Files the project's documents used to cite but that are not in the
	// repository.
	outside = regexp.MustCompile(`\bspec/mcp-tools\.md\b|\bDESIGN(\.md)?\b`)
)

// anchors returns the GitHub anchors of the headings of a markdown text.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatch(fence.ReplaceAllString(text, ""), -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
				b.WriteRune(r)
			}
		}
		out[b.String()] = true
	}
	return out
}

// Every relative link of every markdown file leads to a file of the
// repository (and to a heading of it, when it names one): a newcomer
// following the docs never lands outside them.
func TestMarkdownLinksResolve(t *testing.T) {
	for _, md := range repoFiles(t, ".md") {
		text := read(t, md)
		for _, m := range mdLink.FindAllStringSubmatch(fence.ReplaceAllString(text, ""), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			rel := md
			if file != "" {
				rel = filepath.ToSlash(filepath.Join(filepath.Dir(md), file))
				if _, err := os.Stat(filepath.Join("..", "..", filepath.FromSlash(rel))); err != nil {
					t.Errorf("%s links to %s, which is not in the repository", md, target)
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(rel, ".md") && !anchors(read(t, rel))[anchor] {
				t.Errorf("%s links to %s: %s has no heading #%s", md, target, rel, anchor)
			}
		}
	}
}

// Every docs/ page named in Go code (comments, help text, messages) or in
// the README exists. Tests and the other pages are left out: there
// "docs/guide.md" is as often a file inside an example notebook.
func TestDocsReferencesResolve(t *testing.T) {
	files := []string{"README.md"}
	for _, f := range repoFiles(t, ".go") {
		if !strings.HasSuffix(f, "_test.go") {
			files = append(files, f)
		}
	}
	for _, f := range files {
		for _, ref := range docsRef.FindAllString(read(t, f), -1) {
			if _, err := os.Stat(filepath.Join("..", "..", filepath.FromSlash(ref))); err != nil {
				t.Errorf("%s names %s, which is not in the repository", f, ref)
			}
		}
	}
}

// The documents (README and docs/) stand on their own: none cites the
// design notes or the MCP specification that live outside the repository
// (docs/design.md and the other pages say it in the project's words).
func TestDocsCiteNothingOutsideTheRepository(t *testing.T) {
	var docs []string
	for _, md := range repoFiles(t, ".md") {
		if md == "README.md" || strings.HasPrefix(md, "docs/") {
			docs = append(docs, md)
		}
	}
	for _, md := range docs {
		for i, line := range strings.Split(read(t, md), "\n") {
			if m := outside.FindString(line); m != "" {
				t.Errorf("%s:%d cites %s, which is not in the repository", md, i+1, m)
			}
		}
	}
}
