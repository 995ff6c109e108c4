package remote_test

import (
	"fmt"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/remote"
)

// `current` is decoded on every pull and commit and encoded on every
// publication; its cost grows with the active chain (1,024 increments at
// the default checkpoint threshold).
func BenchmarkManifest(b *testing.B) {
	for _, n := range []int{200, 1024} {
		m := &remote.Manifest{}
		var parent cas.ID
		for i := range n {
			pub := remote.NewUUIDv7()
			head := cas.Sum([]byte(pub))
			m.Increments = append(m.Increments, remote.Increment{Generation: uint64(i + 1), Publication: pub, Parent: parent, Head: head,
				Pack: remote.PackRef{Key: remote.IncrementKey(uint64(i+1), pub), Sum: cas.Sum([]byte("p" + pub)), Size: 4096}})
			parent = head
		}
		m.Generation, m.Head = uint64(n), parent
		data, err := remote.EncodeManifest(m)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("decode/%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := remote.DecodeManifest(data); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("encode/%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := remote.EncodeManifest(m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
