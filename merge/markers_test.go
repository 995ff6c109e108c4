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
		{"a new open restarts the block", "<<<<<<< local\na\n" + block, []Range{{3, 7}}},
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
