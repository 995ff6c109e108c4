package bench

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkCLINoopPull times a `slivingdoc pull` that finds nothing to do
// on a notebook of 10,000 files x 2 KB, with the ratio to `git status` on
// a copy of the same tree. Target (DESIGN §10): <= 2x git status.
func BenchmarkCLINoopPull(b *testing.B) {
	bin := cliBinary(b)
	for _, st := range cliStores {
		const files = 10000
		b.Run(fmt.Sprintf("store=%s/files=%d", st.name, files), func(b *testing.B) {
			nb := newCLINotebook(b, bin, st)
			nb.run("pull", nb.dir)
			fill(b, nb.dir, files, 2048)
			nb.run("commit", nb.dir, "-m", "tree")
			nb.run("pull", nb.dir) // the stat cache is warm, as after any call
			git := newGitReference(b, nb.dir)

			var runs, ref []time.Duration
			for b.Loop() {
				b.StopTimer()
				ref = append(ref, git.status())
				b.StartTimer()
				runs = append(runs, nb.run("pull", nb.dir))
			}
			b.StopTimer()
			report(b, runs, ref)
		})
	}
}
