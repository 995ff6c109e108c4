package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// MergeResult is `slivingdoc merge-file` against `git merge-file -p` on the
// same three files, timed alternately.
type MergeResult struct {
	Size  int
	Ours  OpStats
	Git   OpStats
	Ratio float64 // median wall, ours / git
	Same  bool    // identical output bytes
}

// mergeEdits is the number of changed lines on each side.
const mergeEdits = 100

// mergeNote returns a note of about size bytes (paragraph lines, list items,
// blank lines) and two versions with mergeEdits edited lines each, never
// next to the other side's, so the merge is clean and spans the file.
func mergeNote(size int) (base, local, remote []byte) {
	r := rand.New(rand.NewPCG(uint64(size), 3))
	words := strings.Fields("the notebook agent merge line commit pull remote local file todo done fix check test build plan idea status next server store pack tree cache retry value")
	var lines []string
	for n := 0; n < size; {
		var l string
		switch r.IntN(6) {
		case 0:
		case 1:
			l = fmt.Sprintf("- [ ] item %d %s", len(lines), words[r.IntN(len(words))])
		default:
			var b strings.Builder
			fmt.Fprintf(&b, "%d", len(lines))
			for range 6 + r.IntN(8) {
				b.WriteString(" " + words[r.IntN(len(words))])
			}
			l = b.String()
		}
		lines = append(lines, l)
		n += len(l) + 1
	}
	slots := r.Perm(len(lines) / 4)[:2*mergeEdits]
	edit := func(slots []int, off int, tag string) []byte {
		out := append([]string(nil), lines...)
		for _, s := range slots {
			out[4*s+off] += " edited by " + tag
		}
		return []byte(strings.Join(out, "\n") + "\n")
	}
	return []byte(strings.Join(lines, "\n") + "\n"), edit(slots[:mergeEdits], 0, "local"), edit(slots[mergeEdits:], 2, "remote")
}

func (r *runner) mergeWorkload(ctx context.Context, size int) (MergeResult, error) {
	res := MergeResult{Size: size}
	dir := r.tempDir(fmt.Sprintf("merge-%d", size))
	defer os.RemoveAll(dir)
	base, local, remote := mergeNote(size)
	paths := map[string][]byte{"local.md": local, "base.md": base, "remote.md": remote}
	for name, data := range paths {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return res, err
		}
	}
	var ours, git []Sample
	oursOut, gitOut := filepath.Join(dir, "ours.out"), filepath.Join(dir, "git.out")
	for range r.prof.mergeReps {
		s, _, err := runTimedTo(ctx, dir, oursOut, r.bin, "merge-file", "local.md", "base.md", "remote.md")
		if err != nil {
			return res, err
		}
		ours = append(ours, s)
		s, _, err = runTimedTo(ctx, dir, gitOut, "git", "merge-file", "-p", "-L", "local", "-L", "base", "-L", "remote", "local.md", "base.md", "remote.md")
		if err != nil {
			return res, err
		}
		git = append(git, s)
	}
	res.Ours, res.Git = opStats(ours), opStats(git)
	a, errA := os.ReadFile(oursOut)
	b, errB := os.ReadFile(gitOut)
	res.Same = errA == nil && errB == nil && bytes.Equal(a, b)
	if res.Git.Wall.Median > 0 {
		res.Ratio = float64(res.Ours.Wall.Median) / float64(res.Git.Wall.Median)
	}
	return res, nil
}
