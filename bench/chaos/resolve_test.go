//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A writer's edit to the shared file lands at the end of its own section,
// so concurrent edits of two writers are separated by a header line.
func TestInsertSharedAtSectionEnd(t *testing.T) {
	dir := t.TempDir()
	base := "# shared notes\n## section w00\nx0\n## section w01\n## section w02\n"
	if err := os.WriteFile(filepath.Join(dir, sharedFile), []byte(base), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int{0, 1, 2} {
		w := &writer{id: id, dir: dir}
		if !w.insertShared("t" + string(rune('0'+id))) {
			t.Fatalf("writer %d found no section", id)
		}
	}
	got, _ := os.ReadFile(filepath.Join(dir, sharedFile))
	want := "# shared notes\n## section w00\nx0\nt0\n## section w01\nt1\n## section w02\nt2\n"
	if string(got) != want {
		t.Fatalf("shared file =\n%s\nwant\n%s", got, want)
	}
	if (&writer{id: 3, dir: dir}).insertShared("t3") {
		t.Fatal("a writer without a section inserted anyway")
	}
}

// Resolving a block keeps the remote side and adds the local lines found
// nowhere else in the file, once; text outside blocks and incomplete
// blocks stay as they are.
func TestResolveBlocks(t *testing.T) {
	tests := []struct {
		in, want string
		blocks   int
	}{
		{"a\n<<<<<<< local\nx\ny\n=======\ny\nz\n>>>>>>> remote\nb\n", "a\ny\nz\nx\nb\n", 1},
		{"<<<<<<< local\nx\n=======\n>>>>>>> remote\n<<<<<<< local\n=======\nq\n>>>>>>> remote\n", "x\nq\n", 2},
		{"a\n<<<<<<< local\nx\n", "a\n<<<<<<< local\nx\n", 0},
		{"plain\ntext", "plain\ntext", 0},
		// The local side's line is also outside the block (refinement put
		// the common tail there): not added a second time.
		{"a\n<<<<<<< local\nx\ny\n=======\nz\n>>>>>>> remote\ny\n", "a\nz\nx\ny\n", 1},
	}
	for _, tc := range tests {
		got, n := resolveBlocks(tc.in)
		if got != tc.want || n != tc.blocks {
			t.Errorf("resolveBlocks(%q) = %q, %d; want %q, %d", tc.in, got, n, tc.want, tc.blocks)
		}
	}
}

// -group-commit, which chose a publication mode the product no longer
// has, is still accepted (replay lines of older campaigns carry it) and
// changes nothing: no process is given the setting, and the replay line
// of a new campaign does not name it.
func TestGroupCommitFlagIsIgnored(t *testing.T) {
	for _, args := range [][]string{nil, {"-group-commit=false"}, {"-group-commit"}} {
		cfg, err := parseFlags(append([]string{"-seed", "7"}, args...))
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range cfg.engineSettings() {
			if strings.HasPrefix(kv, "SLIVINGDOC_GROUP_COMMIT=") {
				t.Errorf("%v: settings %v", args, cfg.engineSettings())
			}
		}
		if strings.Contains(replayArgs(cfg), "group-commit") {
			t.Errorf("%v: replay %s", args, replayArgs(cfg))
		}
	}
}
