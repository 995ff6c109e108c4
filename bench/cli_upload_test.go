package bench

import (
	"io/fs"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkCLIAppendUpload measures what a commit of a 1 KiB append to a
// 1 MiB file writes to the store (the file store, whose files are exact):
// bytes uploaded (every object written: the pack and the new `current`)
// and bytes stored (net growth of the store). Target (DESIGN §10): <= 16 KiB
// stored.
func BenchmarkCLIAppendUpload(b *testing.B) {
	bin := cliBinary(b)
	nb := newCLINotebook(b, bin, cliStores[0])
	nb.run("pull", nb.dir)
	fill(b, nb.dir, 1, 1<<20)
	nb.run("commit", nb.dir, "-m", "1 MiB")
	name := filepath.Join(nb.dir, "d000", "note-00000.md")
	edit := NoteText(-2, 1024)

	var uploaded, stored, n int64
	for b.Loop() {
		b.StopTimer()
		before := storeFiles(b, nb.fileDir)
		appendTo(b, name, edit)
		b.StartTimer()
		nb.run("commit", nb.dir, "-m", "append 1 KiB")
		b.StopTimer()
		after := storeFiles(b, nb.fileDir)
		for k, a := range after {
			stored += a.size - before[k].size
			if before[k] != a {
				uploaded += a.size
			}
		}
		for k, bf := range before {
			if _, ok := after[k]; !ok {
				stored -= bf.size
			}
		}
		n++
		b.StartTimer()
	}
	b.ReportMetric(float64(uploaded)/float64(n), "B-uploaded/commit")
	b.ReportMetric(float64(stored)/float64(n), "B-stored/commit")
}

type storeFile struct {
	size int64
	mod  time.Time
}

// storeFiles lists the regular files under dir.
func storeFiles(b *testing.B, dir string) map[string]storeFile {
	b.Helper()
	out := map[string]storeFile{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			out[p] = storeFile{fi.Size(), fi.ModTime()}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return out
}
