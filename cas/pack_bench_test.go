package cas_test

import (
	"fmt"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
)

// collect is a Sink that keeps what it is given, in order.
type collect []cas.Object

func (c *collect) Put(o cas.Object) error { *c = append(*c, o); return nil }

// BenchmarkPackWriter: packing one commit's new objects (a file of ~2 KB
// and the root tree of a flat notebook of 100 or 1,000 files, ~4 or ~43 KB
// to compress) into a pack. "serial" is a CLI process's case (one
// goroutine); "parallel" is many engines of one process packing at once
// (b.RunParallel, GOMAXPROCS goroutines), where a process-wide encoder
// would make every goroutine wait for one another.
func BenchmarkPackWriter(b *testing.B) {
	for _, files := range []int{100, 1000} {
		var objs collect
		ids := map[string]cas.ID{}
		for i := range files {
			id, err := cas.WriteFile(&objs, fmt.Appendf(nil, "# a%04d\n%s", i, genText(uint64(i), 2000)))
			if err != nil {
				b.Fatal(err)
			}
			ids[fmt.Sprintf("a%04d.md", i)] = id
		}
		file := objs[len(objs)-1]
		objs = objs[:0]
		if _, err := cas.WriteTree(&objs, ids); err != nil {
			b.Fatal(err)
		}
		commit := append(collect{file}, objs...)
		pack := func() {
			w := cas.NewPackWriter()
			for _, o := range commit {
				if err := w.Put(o); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := w.Finish(); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(fmt.Sprintf("serial/%d", files), func(b *testing.B) {
			for b.Loop() {
				pack()
			}
		})
		b.Run(fmt.Sprintf("parallel/%d", files), func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					pack()
				}
			})
		})
	}
}
