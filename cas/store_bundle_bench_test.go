//go:build unix

package cas_test

import (
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
)

// BenchmarkStoreAddFetched: keeping n small packs (a sync's increments)
// in a new store directory, one AddPack each ("files") or one AddPacks
// ("bundle"). Metric: cpu-ms/op, user+system CPU of the process.
func BenchmarkStoreAddFetched(b *testing.B) {
	for _, n := range []int{10, 49, 200} {
		var packs []cas.NamedPack
		for i := range n {
			w := cas.NewPackWriter()
			if _, err := cas.WriteFile(w, fmt.Appendf(nil, "increment %d\n%s", i, genText(uint64(i), 1500))); err != nil {
				b.Fatal(err)
			}
			data, err := w.Finish()
			if err != nil {
				b.Fatal(err)
			}
			packs = append(packs, cas.NamedPack{Name: fmt.Sprintf("%020d.pack", i), Data: data})
		}
		for _, mode := range []string{"files", "bundle"} {
			b.Run(fmt.Sprintf("%s/%d", mode, n), func(b *testing.B) {
				root := b.TempDir()
				cpu := processCPU()
				i := 0
				for b.Loop() {
					s, err := cas.OpenStore(filepath.Join(root, fmt.Sprint(i)))
					if err != nil {
						b.Fatal(err)
					}
					i++
					if mode == "bundle" {
						err = s.AddPacks(packs)
					} else {
						for _, p := range packs {
							if err = s.AddPack(p.Name, p.Data); err != nil {
								break
							}
						}
					}
					if err != nil {
						b.Fatal(err)
					}
					s.Close()
				}
				b.ReportMetric(float64(processCPU()-cpu)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
			})
		}
	}
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
