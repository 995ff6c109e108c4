package secrets

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corpus is the false-positive corpus in testdata/corpus, chosen by one
// rule: every .md file of three public documentation repositories at
// pinned commits (testdata/corpus/README.md names them, their licences
// are beside the files). The counts pin it: a file lost or added shows.
var corpus = map[string]int{
	"rust-lang-book":  112, // rust-lang/book, src/**/*.md
	"tldr":            370, // tldr-pages/tldr, pages/osx/*.md
	"prometheus-docs": 71,  // prometheus/docs, docs/**/*.md
}

// Ordinary documentation holds no credential: not one detection in its
// lines or in its file and directory names.
func TestNoFalsePositivesInCorpus(t *testing.T) {
	for dir, want := range corpus {
		root := filepath.Join("testdata", "corpus", dir)
		n := 0
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if _, found := Redact(d.Name()); found {
				t.Errorf("%s: the name is taken for a credential", p)
			}
			if d.IsDir() || !strings.HasSuffix(p, ".md") || strings.HasPrefix(d.Name(), "LICENSE") {
				return nil
			}
			n++
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, f := range Scan(b) {
				t.Errorf("%s: lines %d-%d taken for %s", p, f.Start, f.End, f.Rule)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if n != want {
			t.Errorf("%s: %d .md files, the corpus has %d", dir, n, want)
		}
	}
}
