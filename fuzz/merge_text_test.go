package fuzz

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/slivingdoc/slivingdoc/merge"
)

// addMergeSeeds seeds a three-input target with the pinned git cases of
// merge/testdata and a few shapes the generator rarely makes.
func addMergeSeeds(f *testing.F) {
	dirs, _ := filepath.Glob("../merge/testdata/git/*")
	for _, d := range dirs {
		var in [3][]byte
		for i, name := range []string{"base", "local", "remote"} {
			in[i], _ = os.ReadFile(filepath.Join(d, name))
		}
		f.Add(in[0], in[1], in[2])
	}
	f.Add([]byte("a\nb\nc\n"), []byte("A\nb\nc\n"), []byte("a\nb\nC\n"))
	f.Add([]byte("a\r\nb"), []byte("a\r\nL"), []byte("a\r\nR\r\n"))
	f.Add([]byte(""), []byte("x\n\ny\n"), []byte("x\n\nz"))
	f.Add([]byte("\n\n\n"), []byte("\n"), []byte("\n\n\n\n\n"))
	f.Add([]byte("=======\n"), []byte("=======\nL\n"), []byte("R\n=======\n"))
}

// markerLike reports whether any input line is an opening or closing
// marker: then the scanner may find blocks the merge did not write.
func markerLike(in ...[]byte) bool {
	for _, b := range in {
		for _, l := range splitLines(b) {
			l = bytes.TrimSuffix(bytes.TrimSuffix(l, []byte("\n")), []byte("\r"))
			if string(l) == "<<<<<<< local" || string(l) == ">>>>>>> remote" {
				return true
			}
		}
	}
	return false
}

// FuzzMergeText checks the invariants of issue 3 on any bytes, for Text
// and TextStrict alike: an unchanged side yields the other side exactly;
// equal sides yield that side; the output is a well-formed sequence of text
// and conflict blocks, each recorded range framing one block; and the
// scanner finds exactly the blocks the merge wrote.
func FuzzMergeText(f *testing.F) {
	addMergeSeeds(f)
	f.Add([]byte("log\n"), []byte("log\nL\n"), []byte("log\nR\n"))
	f.Add([]byte("log"), []byte("log\nL"), []byte("log\r\nR\r\n"))
	// Text once kept touching additions here that TextStrict untangles.
	f.Add([]byte("1\n\n1\n\n\n"), []byte("1\n\n1\n## h\n\n\n\n\n## h\n\n"), []byte("1\n\n1\n\n\n1\n\n1\n2\n"))
	f.Fuzz(func(t *testing.T, base, local, remote []byte) {
		checkMergeInvariants(t, merge.Text, base, local, remote)
		checkMergeInvariants(t, merge.TextStrict, base, local, remote)
		// Rule 6 only decides merges that git's rules conflict on.
		if strict := merge.TextStrict(base, local, remote); len(strict.Conflicts) == 0 {
			if got := merge.Text(base, local, remote); !bytes.Equal(got.Content, strict.Content) || len(got.Conflicts) != 0 {
				t.Fatalf("TextStrict clean %q, Text %q %v", strict.Content, got.Content, got.Conflicts)
			}
		}
	})
}

// checkMergeInvariants checks one merge function's invariants on one input.
func checkMergeInvariants(t *testing.T, text func(base, local, remote []byte) merge.TextResult, base, local, remote []byte) {
	t.Helper()
	if got := text(base, base, remote); !bytes.Equal(got.Content, remote) || len(got.Conflicts) != 0 {
		t.Fatalf("local == base: got %q %v, want remote %q", got.Content, got.Conflicts, remote)
	}
	if got := text(base, local, base); !bytes.Equal(got.Content, local) || len(got.Conflicts) != 0 {
		t.Fatalf("remote == base: got %q %v, want local %q", got.Content, got.Conflicts, local)
	}
	if got := text(base, local, local); !bytes.Equal(got.Content, local) || len(got.Conflicts) != 0 {
		t.Fatalf("local == remote: got %q %v, want local %q", got.Content, got.Conflicts, local)
	}
	got := text(base, local, remote)
	lines := splitLines(got.Content)
	prev := 0
	for _, r := range got.Conflicts {
		if r.Start <= prev || r.End < r.Start+2 || r.End > len(lines) {
			t.Fatalf("range %v out of order or bounds (%d lines, previous end %d)", r, len(lines), prev)
		}
		if !isMarker(lines[r.Start-1], "<<<<<<< local") || !isMarker(lines[r.End-1], ">>>>>>> remote") {
			t.Fatalf("range %v does not frame a block: %q ... %q", r, lines[r.Start-1], lines[r.End-1])
		}
		sep := 0
		for _, l := range lines[r.Start : r.End-1] {
			if isMarker(l, "=======") {
				sep++
			}
		}
		if sep == 0 {
			t.Fatalf("block %v has no separator", r)
		}
		prev = r.End
	}
	if !markerLike(base, local, remote) {
		if scanned := merge.ScanMarkers(got.Content); !slices.Equal(scanned, got.Conflicts) {
			t.Fatalf("scanner found %v, merge wrote %v in %q", scanned, got.Conflicts, got.Content)
		}
	}
}

// splitLines splits after each LF; a final run without LF is a line.
func splitLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return append(out, b)
		}
		out = append(out, b[:i+1])
		b = b[i+1:]
	}
	return out
}

// isMarker reports whether line is exactly m ended by LF or CRLF.
func isMarker(line []byte, m string) bool {
	return string(line) == m+"\n" || string(line) == m+"\r\n"
}
