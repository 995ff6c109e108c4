package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
)

// BenchmarkCASOpenStore1350: what a process pays to open the cache of an
// active chain late in its life (about 1,350 small pack files, issue 17)
// once its merged index is written.
//   - unchanged: the directory has been left alone since the index was
//     written, so its identity vouches for the index.
//   - changed: an entry was created and removed since (the directory's
//     mtime moved), so the open lists the directory (it stats no file:
//     the index vouches for the names it records).
func BenchmarkCASOpenStore1350(b *testing.B) {
	dir := b.TempDir()
	s, err := cas.OpenStore(dir)
	if err != nil {
		b.Fatal(err)
	}
	for i := range 1350 {
		w := cas.NewPackWriter()
		for j := range 4 {
			if _, err := cas.WriteFile(w, casText(uint64(i*4+j), 300)); err != nil {
				b.Fatal(err)
			}
		}
		data, _ := w.Finish()
		if err := s.AddPack(fmt.Sprintf("%04d.pack", i), data); err != nil {
			b.Fatal(err)
		}
	}
	s.Close()
	open := func(b *testing.B) {
		s, err := cas.OpenStore(dir)
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
	open(b) // writes the merged index (creating it changes the directory)
	// An open of a chain quiet for longer than the racy window records
	// the directory's identity (the first time in a new side index, which
	// changes the directory again; the second in place).
	for range 2 {
		past := time.Now().Add(-2 * time.Minute)
		if err := os.Chtimes(dir, past, past); err != nil {
			b.Fatal(err)
		}
		open(b)
	}
	b.Run("unchanged", func(b *testing.B) {
		for b.Loop() {
			open(b)
		}
	})
	b.Run("changed", func(b *testing.B) {
		touch := filepath.Join(dir, ".touch.tmp")
		for b.Loop() {
			b.StopTimer()
			if err := os.WriteFile(touch, nil, 0o600); err != nil {
				b.Fatal(err)
			}
			if err := os.Remove(touch); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			open(b)
		}
	})
}
