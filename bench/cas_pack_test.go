package bench

import (
	"fmt"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
)

// casText returns about n bytes of note-like text (compressible the way
// notes are, not the way a repeated line is).
func casText(seed uint64, n int) []byte {
	words := []string{"the", "notebook", "agent", "merge", "commit", "line", "file", "store",
		"pack", "chunk", "of", "and", "a", "to", "is", "in", "conflict", "remote", "local"}
	x := seed | 1
	out := make([]byte, 0, n+16)
	for len(out) < n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		out = append(out, words[x%uint64(len(words))]...)
		if x>>60 == 0 {
			out = append(out, '\n')
		} else {
			out = append(out, ' ')
		}
	}
	return out[:n]
}

// casPackInput is 8 MiB of content: text files and random files of 64 KiB.
func casPackInput() [][]byte {
	var files [][]byte
	for i := range 128 {
		if i%2 == 0 {
			files = append(files, casText(uint64(i), 64<<10))
		} else {
			files = append(files, casRandom(uint64(i), 64<<10))
		}
	}
	return files
}

func casWritePack(b *testing.B, files [][]byte) []byte {
	w := cas.NewPackWriter()
	for _, f := range files {
		if _, err := cas.WriteFile(w, f); err != nil {
			b.Fatal(err)
		}
	}
	data, err := w.Finish()
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkCASPackWrite: chunk, hash, verify, compress and frame 8 MiB of
// mixed text and random content into one pack. MB/s of content.
func BenchmarkCASPackWrite(b *testing.B) {
	files := casPackInput()
	size := 0
	for _, f := range files {
		size += len(f)
	}
	b.SetBytes(int64(size))
	var packed int
	for b.Loop() {
		packed = len(casWritePack(b, files))
	}
	b.ReportMetric(float64(packed)/float64(size), "pack/content")
}

// BenchmarkCASPackRead: open (trailer checksum, index) and read back every
// file of the 8 MiB pack, every object verified against its ID.
func BenchmarkCASPackRead(b *testing.B) {
	files := casPackInput()
	w := cas.NewPackWriter()
	var ids []cas.ID
	size := 0
	for _, f := range files {
		id, _ := cas.WriteFile(w, f)
		ids = append(ids, id)
		size += len(f)
	}
	data, _ := w.Finish()
	b.SetBytes(int64(size))
	for b.Loop() {
		p, err := cas.OpenPack(data)
		if err != nil {
			b.Fatal(err)
		}
		for _, id := range ids {
			if _, err := cas.ReadFile(p, id); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkCASStoreGet: one small file read through a Store of 300 packs on
// disk (in-memory index, one ReadAt per object), the path of a cold pull.
func BenchmarkCASStoreGet(b *testing.B) {
	s, err := cas.OpenStore(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var ids []cas.ID
	for i := range 300 {
		w := cas.NewPackWriter()
		id, _ := cas.WriteFile(w, casText(uint64(i), 2000))
		data, _ := w.Finish()
		if err := s.AddPack(fmt.Sprintf("%d.pack", i), data); err != nil {
			b.Fatal(err)
		}
		ids = append(ids, id)
	}
	i := 0
	for b.Loop() {
		if _, err := cas.ReadFile(s, ids[i%len(ids)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkCASOpenStore300: what every process pays to open a local store
// of 300 packs (header, trailer and index of each; no whole-pack hashing).
func BenchmarkCASOpenStore300(b *testing.B) {
	dir := b.TempDir()
	s, err := cas.OpenStore(dir)
	if err != nil {
		b.Fatal(err)
	}
	for i := range 300 {
		w := cas.NewPackWriter()
		for j := range 10 {
			if _, err := cas.WriteFile(w, casText(uint64(i*10+j), 2000)); err != nil {
				b.Fatal(err)
			}
		}
		data, _ := w.Finish()
		if err := s.AddPack(fmt.Sprintf("%d.pack", i), data); err != nil {
			b.Fatal(err)
		}
	}
	s.Close()
	for b.Loop() {
		s, err := cas.OpenStore(dir)
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}
