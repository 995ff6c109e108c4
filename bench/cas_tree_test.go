package bench

import (
	"fmt"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
)

// casNotebook returns 10,000 paths in 100 directories of 10 subdirectories,
// each mapped to a distinct file ID.
func casNotebook() map[string]cas.ID {
	files := make(map[string]cas.ID, 10000)
	for i := range 10000 {
		path := fmt.Sprintf("area-%02d/topic-%d/note-%05d.md", i%100, i%10, i)
		files[path] = cas.Sum([]byte(path))
	}
	return files
}

// BenchmarkCASWriteTree10k: build (encode and hash) every tree object of a
// notebook of 10,000 files, as every commit does.
func BenchmarkCASWriteTree10k(b *testing.B) {
	files := casNotebook()
	for b.Loop() {
		if _, err := cas.WriteTree(nil, files); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCASReadTree10k: walk the same notebook back into its path map.
func BenchmarkCASReadTree10k(b *testing.B) {
	files := casNotebook()
	m := cas.NewObjectSet()
	root, err := cas.WriteTree(m, files)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		got, err := cas.ReadTree(m, root)
		if err != nil || len(got) != len(files) {
			b.Fatal(err)
		}
	}
}
