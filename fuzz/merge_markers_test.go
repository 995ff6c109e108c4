package fuzz

import (
	"testing"

	"github.com/slivingdoc/slivingdoc/merge"
)

// FuzzScanMarkers: no panic on any bytes, and every range is in order,
// inside the content, and starts and ends on marker lines.
func FuzzScanMarkers(f *testing.F) {
	f.Add([]byte("<<<<<<< local\na\n=======\nb\n>>>>>>> remote\n"))
	f.Add([]byte("<<<<<<< local\r\n=======\r\n>>>>>>> remote"))
	f.Add([]byte("<<<<<<< local\n<<<<<<< local\n=======\n=======\n>>>>>>> remote\n>>>>>>> remote\n"))
	f.Fuzz(func(t *testing.T, content []byte) {
		lines := splitLines(content)
		prev := 0
		for _, r := range merge.ScanMarkers(content) {
			if r.Start <= prev || r.End < r.Start+2 || r.End > len(lines) {
				t.Fatalf("range %v out of order or bounds (%d lines)", r, len(lines))
			}
			open, end := lines[r.Start-1], lines[r.End-1]
			if !isMarker(open, "<<<<<<< local") {
				t.Fatalf("range %v starts on %q", r, open)
			}
			if !isMarker(end, ">>>>>>> remote") && string(end) != ">>>>>>> remote" {
				t.Fatalf("range %v ends on %q", r, end)
			}
			prev = r.End
		}
	})
}

// FuzzStat: insertions minus deletions is the change in line count, and
// neither exceeds the lines of its side.
func FuzzStat(f *testing.F) {
	f.Add([]byte("a\nb\n"), []byte("a\nc\nb"))
	f.Add([]byte(""), []byte("x"))
	f.Fuzz(func(t *testing.T, old, new []byte) {
		ins, del := merge.Stat(old, new)
		lo, ln := merge.CountLines(old), merge.CountLines(new)
		if ins-del != ln-lo || ins > ln || del > lo || ins < 0 || del < 0 {
			t.Fatalf("Stat = +%d -%d for %d -> %d lines", ins, del, lo, ln)
		}
	})
}
