package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/slivingdoc/slivingdoc/bench"
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

func (r *runner) mergeWorkload(ctx context.Context, size int) (MergeResult, error) {
	res := MergeResult{Size: size}
	dir := r.tempDir(fmt.Sprintf("merge-%d", size))
	base, local, remote := bench.MergeNote(size)
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
