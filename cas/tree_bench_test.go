package cas

import (
	"fmt"
	"testing"
)

// BenchmarkCheckTree: checking the structure of a flat notebook's root
// tree of 1,000 entries, as every Sink does before it keeps it and a
// pack's verification does for every tree it holds.
func BenchmarkCheckTree(b *testing.B) {
	var entries []TreeEntry
	for i := range 1000 {
		entries = append(entries, TreeEntry{Kind: KindFile, Name: fmt.Sprintf("a%04d.md", i), ID: Sum([]byte(fmt.Sprint(i)))})
	}
	o, err := EncodeTree(entries)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := checkBody(KindTree, o.Body); err != nil {
			b.Fatal(err)
		}
	}
}
