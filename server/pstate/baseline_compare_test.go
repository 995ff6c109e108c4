package pstate

import (
	"fmt"
	"maps"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
)

// A loaded baseline compares with a tree without decoding its entries,
// and says the same as the decoded map would.
func TestBaselineSameFiles(t *testing.T) {
	files := map[string]cas.ID{}
	for i := range 50 {
		files[fmt.Sprintf("d%d/n%d.md", i%5, i)] = cas.Sum(fmt.Appendf(nil, "%d", i))
	}
	other := cas.Sum([]byte("other"))
	changed := maps.Clone(files)
	changed["d1/n1.md"] = other
	missing := maps.Clone(files)
	delete(missing, "d2/n2.md")
	renamed := maps.Clone(missing)
	renamed["d2/n2.mdx"] = files["d2/n2.md"]
	extra := maps.Clone(files)
	extra["new.md"] = other
	for name, c := range map[string]struct {
		m    map[string]cas.ID
		want bool
	}{
		"same": {maps.Clone(files), true}, "changed ID": {changed, false}, "missing": {missing, false},
		"renamed": {renamed, false}, "extra": {extra, false}, "empty": {map[string]cas.ID{}, false},
	} {
		for _, decoded := range []bool{false, true} {
			b, err := DecodeBaseline(encodeBaseline(&Baseline{Generation: 3, Files: files}))
			if err != nil {
				t.Fatal(err)
			}
			if decoded && !maps.Equal(b.Tree(), files) {
				t.Fatal("the baseline does not round-trip")
			}
			if got := b.SameFiles(c.m); got != c.want {
				t.Errorf("%s (decoded %v): sameFiles = %v, want %v", name, decoded, got, c.want)
			}
		}
	}
}
