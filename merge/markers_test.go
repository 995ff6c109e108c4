package merge

import (
	"strings"
	"testing"
)

func TestScanMarkers(t *testing.T) {
	block := "<<<<<<< local\nmine\n=======\ntheirs\n>>>>>>> remote\n"
	for _, tc := range []struct {
		name    string
		content string
		want    []Range
	}{
		{"no blocks", "a\nb\n", nil},
		{"one block", "a\n" + block + "b\n", []Range{{2, 6}}},
		{"two blocks", block + "x\n" + block, []Range{{1, 5}, {7, 11}}},
		{"CRLF", strings.ReplaceAll("a\n"+block, "\n", "\r\n"), []Range{{2, 6}}},
		{"close marker at the end without newline", "a\n" + strings.TrimSuffix(block, "\n"), []Range{{2, 6}}},
		{"empty sides", "<<<<<<< local\n=======\n>>>>>>> remote\n", []Range{{1, 3}}},
		{"separator lines inside a side are content", "<<<<<<< local\nTitle\n=======\n=======\nx\n>>>>>>> remote\n", []Range{{1, 6}}},
		{"an open never closed does not hide the block after it", "<<<<<<< local\na\n" + block, []Range{{1, 7}}},
		{"a block nested in the local side", "a\n<<<<<<< local\n" + block + "=======\nr\n>>>>>>> remote\nz\n", []Range{{2, 10}}},
		{"a block nested in the remote side", "<<<<<<< local\nl\n=======\n" + block + ">>>>>>> remote\n", []Range{{1, 9}}},
		// What pulling twice without resolving wrote before blocks stopped nesting.
		{"the interleaved nesting of an old double pull", "a\n<<<<<<< local\nlocal1\n=======\nremote1\n<<<<<<< local\n>>>>>>> remote\n=======\nremote2\n>>>>>>> remote\n", []Range{{2, 10}}},
		{"a stray close after a block is text", block + ">>>>>>> remote\n", []Range{{1, 5}}},
		{"no separator: no block", "<<<<<<< local\na\n>>>>>>> remote\n", nil},
		{"close before open: no block", ">>>>>>> remote\n=======\n<<<<<<< local\n", nil},
		{"unterminated block", "<<<<<<< local\na\n=======\nb\n", nil},
		{"marker not at column 0", " <<<<<<< local\na\n=======\nb\n>>>>>>> remote\n", nil},
		{"one character changed in a marker", "<<<<<<< locaL\na\n=======\nb\n>>>>>>> remote\n", nil},
		{"separator changed", "<<<<<<< local\na\n======\nb\n>>>>>>> remote\n", nil},
		{"trailing space on a marker", "<<<<<<< local\na\n=======\nb\n>>>>>>> remote \n", nil},
		{"lone CR is not a line end", "<<<<<<< local\ra\n=======\nb\n>>>>>>> remote\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ScanMarkers([]byte(tc.content)); !equalRanges(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
