package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// historyCommits is the history DESIGN §10 measures against.
const historyCommits = 200

// BenchmarkCLICommitAfterHistory times `slivingdoc commit` after a 1 KiB
// append once the notebook has 200 earlier commits, against the same
// commits right after the first one (timed before the history is made),
// and on 1,000 files a cold pull (a new directory and private root) after
// that history. Targets (DESIGN §10, SeaweedFS): within 1.2x of the first
// commits; cold pull of 1,000 files <= 0.6 s.
func BenchmarkCLICommitAfterHistory(b *testing.B) {
	bin := cliBinary(b)
	for _, st := range cliStores {
		for _, files := range []int{1000, 10000} {
			b.Run(fmt.Sprintf("store=%s/files=%d", st.name, files), func(b *testing.B) {
				nb := newCLINotebook(b, bin, st)
				nb.run("pull", nb.dir)
				names := fill(b, nb.dir, files, 2048)
				nb.run("commit", nb.dir, "-m", "tree")
				git := newGitReference(b, nb.dir)
				edit := NoteText(-1, 1024)
				i := 0
				// appendNext appends the edit to the next file, and with ref
				// to the git reference's copy, timing its status.
				appendNext := func(ref *[]time.Duration) {
					name := filepath.FromSlash(names[i%len(names)])
					i++
					appendTo(b, filepath.Join(nb.dir, name), edit)
					if ref != nil {
						appendTo(b, filepath.Join(git.dir, name), edit)
						*ref = append(*ref, git.status())
					}
				}
				commit := func(ref *[]time.Duration) time.Duration {
					appendNext(ref)
					return nb.run("commit", nb.dir, "-m", "append 1 KiB")
				}

				b.StopTimer()
				var first, ref []time.Duration
				for range 9 {
					first = append(first, commit(&ref))
				}
				for range historyCommits - len(first) {
					commit(nil)
				}
				var after []time.Duration
				b.StartTimer()
				for b.Loop() {
					b.StopTimer()
					appendNext(&ref)
					b.StartTimer()
					after = append(after, nb.run("commit", nb.dir, "-m", "append 1 KiB"))
				}
				b.StopTimer()
				report(b, after, ref)
				b.ReportMetric(float64(median(first).Microseconds())/1000, "ms/first-commits")
				b.ReportMetric(float64(median(after))/float64(median(first)), "x-first-commits")
				if files == 1000 {
					var cold []time.Duration
					for range 5 {
						// The same store, a new directory and private root
						// (exec uses the last of duplicate variables).
						base := b.TempDir()
						fresh := *nb
						fresh.dir = filepath.Join(base, "notes")
						fresh.env = append(slices.Clone(nb.env), "SLIVINGDOC_PRIVATE_ROOT="+filepath.Join(base, "private"))
						cold = append(cold, fresh.run("pull", fresh.dir))
						if err := os.RemoveAll(base); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(median(cold).Microseconds())/1000, "ms/cold-pull")
				}
			})
		}
	}
}
