package bench

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkCLICommit1KiB times `slivingdoc commit` (a whole process) after
// a 1 KiB append to one file of a notebook of N files x 2 KB, with the
// ratio to `git status` on a copy of the same tree in the same state.
// Targets (DESIGN §10, SeaweedFS): 1,000 files <= 30 ms, 10,000 <= 100 ms.
func BenchmarkCLICommit1KiB(b *testing.B) {
	bin := cliBinary(b)
	for _, st := range cliStores {
		for _, files := range []int{100, 1000, 10000} {
			b.Run(fmt.Sprintf("store=%s/files=%d", st.name, files), func(b *testing.B) {
				nb := newCLINotebook(b, bin, st)
				nb.run("pull", nb.dir)
				names := fill(b, nb.dir, files, 2048)
				nb.run("commit", nb.dir, "-m", "tree")
				git := newGitReference(b, nb.dir)
				edit := NoteText(-1, 1024)

				var runs, ref []time.Duration
				i := 0
				for b.Loop() {
					name := filepath.FromSlash(names[i%len(names)])
					i++
					b.StopTimer()
					appendTo(b, filepath.Join(nb.dir, name), edit)
					appendTo(b, filepath.Join(git.dir, name), edit)
					ref = append(ref, git.status())
					b.StartTimer()
					runs = append(runs, nb.run("commit", nb.dir, "-m", "append 1 KiB"))
				}
				b.StopTimer()
				report(b, runs, ref)
			})
		}
	}
}
