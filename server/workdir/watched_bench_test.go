package workdir

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkScanRemembered is the scan a long-lived process makes before
// each commit: one file appended to since the last scan, every other
// directory remembered (1,000 files in 1,000 directories, and 10,000 in
// the same directories, as cmd/slivingdoc's BenchmarkServe lays them out).
func BenchmarkScanRemembered(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			benchScanRemembered(b, n, filepath.Join("d00", "e00", "note-00000.md"))
		})
	}
}

// BenchmarkScanRememberedAtTop is BenchmarkScanRemembered with the file
// appended to in L's top directory, above every other directory.
func BenchmarkScanRememberedAtTop(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			benchScanRemembered(b, n, "top.md")
		})
	}
}

// benchScanRemembered lays out n files as BenchmarkScanRemembered says,
// and target (one of them, or one more), then times an append to target
// and a scan.
func benchScanRemembered(b *testing.B, n int, target string) {
	dir := b.TempDir()
	old := time.Now().Add(-time.Hour)
	files := n
	for i := range n {
		p := filepath.Join(fmt.Sprintf("d%02d", i%50), fmt.Sprintf("e%02d", (i/50)%20), fmt.Sprintf("note-%05d.md", i))
		if p == target {
			files--
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(fmt.Sprintf("# note %d\n", i)), 0o644); err != nil {
			b.Fatal(err)
		}
		os.Chtimes(filepath.Join(dir, p), old, old)
	}
	target = filepath.Join(dir, target)
	if files == n {
		if err := os.WriteFile(target, []byte("# top\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		os.Chtimes(target, old, old)
		n++
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	mem := NewWatchedListings()
	defer mem.Close()
	cache := NewStatCache()
	for range 2 {
		if _, err := Scan(r, cache, Rules{}, mem); err != nil {
			b.Fatal(err)
		}
	}
	if mem.w == nil {
		b.Skip("no change watch here")
	}
	line := strings.Repeat("x", 63) + "\n"
	b.ResetTimer()
	for range b.N {
		f, err := os.OpenFile(target, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		f.WriteString(line)
		f.Close()
		res, err := Scan(r, cache, Rules{}, mem)
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Files) != n {
			b.Fatalf("%d files listed, want %d", len(res.Files), n)
		}
	}
}
