package main

import (
	"slices"
	"strings"
	"testing"
)

// The audit is what turns contention into a correctness check, so it must
// see each kind of damage on its own.
func TestCheckLines(t *testing.T) {
	accepted := []string{"w000-c000 alpha", "w000-c001 beta", "w001-c000 gamma"}
	written := append(slices.Clone(accepted), "w001-c001 delta") // delta's commit gave up
	clean := map[string][]byte{
		"w000.md": []byte("# w000\nw000-c000 alpha\nw000-c001 beta\n"),
		"w001.md": []byte("# w001\r\nw001-c000 gamma\r\n"),
	}
	tests := []struct {
		name               string
		edit               func(map[string][]byte)
		lost, dup, unknown []string
	}{
		{"clean", func(map[string][]byte) {}, nil, nil, nil},
		{"unaccepted line present once is fine", func(tr map[string][]byte) {
			tr["w001.md"] = append(tr["w001.md"], "w001-c001 delta\n"...)
		}, nil, nil, nil},
		{"one line deleted", func(tr map[string][]byte) {
			tr["w000.md"] = []byte(strings.Replace(string(tr["w000.md"]), "w000-c001 beta\n", "", 1))
		}, []string{"w000-c001 beta"}, nil, nil},
		{"a whole file deleted", func(tr map[string][]byte) { delete(tr, "w001.md") }, []string{"w001-c000 gamma"}, nil, nil},
		{"line duplicated in another file", func(tr map[string][]byte) {
			tr["other.md"] = []byte("w000-c000 alpha\n")
		}, nil, []string{"w000-c000 alpha"}, nil},
		{"unaccepted line duplicated", func(tr map[string][]byte) {
			tr["w001.md"] = append(tr["w001.md"], "w001-c001 delta\nw001-c001 delta\n"...)
		}, nil, []string{"w001-c001 delta"}, nil},
		{"line altered", func(tr map[string][]byte) {
			tr["w001.md"] = []byte("# w001\nw001-c000 gammA\n")
		}, []string{"w001-c000 gamma"}, nil, []string{"w001-c000 gammA"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tree := map[string][]byte{}
			for k, v := range clean {
				tree[k] = slices.Clone(v)
			}
			tc.edit(tree)
			c := checkLines(tree, accepted, written)
			if !slices.Equal(c.Lost, tc.lost) || !slices.Equal(c.Duplicated, tc.dup) || !slices.Equal(c.Unknown, tc.unknown) {
				t.Fatalf("lost %q dup %q unknown %q; want %q %q %q", c.Lost, c.Duplicated, c.Unknown, tc.lost, tc.dup, tc.unknown)
			}
			if c.OK() != (tc.lost == nil && tc.dup == nil && tc.unknown == nil) {
				t.Fatalf("OK() = %v for %+v", c.OK(), c)
			}
			if c.Expected != len(accepted) {
				t.Fatalf("Expected = %d, want %d", c.Expected, len(accepted))
			}
		})
	}
}

// A shared file's sections keep each writer's insertions apart, and
// resolving a conflict keeps both sides without the markers.
func TestSharedSections(t *testing.T) {
	text := string(sharedFile([]string{"w000", "w001"}))
	text, err := insertInSection(text, "w001", "w001-c000 x\n")
	if err != nil {
		t.Fatal(err)
	}
	text, err = insertInSection(text, "w000", "w000-c000 y\n")
	if err != nil {
		t.Fatal(err)
	}
	text, err = insertInSection(text, "w001", "w001-c001 z\n")
	if err != nil {
		t.Fatal(err)
	}
	want := "## w000\nw000-c000 y\n\n## w001\nw001-c000 x\nw001-c001 z\n\n"
	if text != want {
		t.Fatalf("got %q, want %q", text, want)
	}
	if _, err := insertInSection(text, "w002", "x\n"); err == nil {
		t.Fatal("insert into a missing section succeeded")
	}
}
