//go:build unix

package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestAuditHelpers(t *testing.T) {
	for _, l := range []string{"<<<<<<< local", ">>>>>>> remote", "=======", "<<<<<<< HEAD", "========"} {
		if !markerLine(l) {
			t.Errorf("%q is a marker line", l)
		}
	}
	for _, l := range []string{"chaos-1-file-w00-00001", "## section w00", "# shared notes", "<<<<<<<", " ======="} {
		if markerLine(l) {
			t.Errorf("%q is not a marker line", l)
		}
	}
	mine := "## section w00\n<<<<<<< local\nchaos-x-w00-00002\n=======\nchaos-x-w01-00007\n>>>>>>> remote\n"
	if blockWithout(mine, "chaos-x-w00") {
		t.Error("a block holding the writer's line is its own")
	}
	foreign := "## section w01\n<<<<<<< local\nchaos-x-w01-00003\n=======\nchaos-x-w01-00003\nchaos-x-w01-00004\n>>>>>>> remote\n"
	if !blockWithout(mine+foreign, "chaos-x-w00") {
		t.Error("a block of another writer's lines only is foreign")
	}
}

func TestAppendOwnRewritesTheLastEditLine(t *testing.T) {
	w := &writer{id: 0, dir: t.TempDir()}
	for i, tok := range []string{"chaos-a", "chaos-b"} {
		w.seq = i + 1
		if err := w.appendOwn(tok); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := os.ReadFile(filepath.Join(w.dir, ownFile(0)))
	if want := "chaos-a\nchaos-b\nlast edit: 00002\n"; string(got) != want {
		t.Fatalf("own file %q, want %q", got, want)
	}
}
