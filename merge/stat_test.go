package merge

import "testing"

func TestCountLines(t *testing.T) {
	for in, want := range map[string]int{"": 0, "a": 1, "a\n": 1, "a\nb": 2, "\n\n": 2, "a\r\nb\r\n": 2} {
		if got := CountLines([]byte(in)); got != want {
			t.Errorf("CountLines(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestStat(t *testing.T) {
	for _, tc := range []struct {
		name     string
		old, new []byte
		ins, del int
	}{
		{"added file", nil, []byte("a\nb\nc"), 3, 0},
		{"removed file", []byte("a\nb\n"), nil, 0, 2},
		{"empty added file", nil, []byte{}, 0, 0},
		{"unchanged", []byte("a\n"), []byte("a\n"), 0, 0},
		{"one line changed", []byte("a\nb\nc\n"), []byte("a\nB\nc\n"), 1, 1},
		{"appended", []byte("a\n"), []byte("a\nb\nc\n"), 2, 0},
		{"final newline added", []byte("a\nb"), []byte("a\nb\n"), 1, 1},
		{"line ending changed", []byte("a\r\nb\n"), []byte("a\nb\n"), 1, 1},
		{"moved line", []byte("a\nb\nc\n"), []byte("b\nc\na\n"), 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ins, del := Stat(tc.old, tc.new)
			if ins != tc.ins || del != tc.del {
				t.Errorf("Stat = +%d -%d, want +%d -%d", ins, del, tc.ins, tc.del)
			}
		})
	}
}
