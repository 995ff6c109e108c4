package bench

// Benchmarks of the text merge (issue 3): merge.Text on 1 MB and 5 MB notes
// with 100 scattered edits per side, in MB/s of note size; and whole
// processes, `slivingdoc merge-file` against `git merge-file -p` on the same
// files, timed alternately in the same run and quoted as a ratio.

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/merge"
)

var mergeSizes = []int{1 << 20, 5 << 20}

func BenchmarkMergeText(b *testing.B) {
	for _, size := range mergeSizes {
		base, local, remote := MergeNote(size)
		b.Run(sizeName(size), func(b *testing.B) {
			if res := merge.Text(base, local, remote); len(res.Conflicts) != 0 {
				b.Fatalf("conflicts %v in a merge built to be clean", res.Conflicts)
			}
			b.SetBytes(int64(len(base)))
			b.ReportAllocs()
			for b.Loop() {
				merge.Text(base, local, remote)
			}
		})
	}
}

// BenchmarkMergeTextReorganised merges a 1 MB note whose local side moved
// its 200-line blocks around (a note reorganised) with the scattered
// edits of the remote: the costly case of a diff without a cost limit,
// which the cut at unique lines (merge/split.go) keeps linear.
func BenchmarkMergeTextReorganised(b *testing.B) {
	base, _, remote := MergeNote(1 << 20)
	lines := bytes.SplitAfter(base, []byte("\n"))
	var blocks [][]byte
	for i := 0; i < len(lines); i += 200 {
		blocks = append(blocks, bytes.Join(lines[i:min(i+200, len(lines))], nil))
	}
	r := rand.New(rand.NewPCG(7, 8))
	r.Shuffle(len(blocks), func(i, j int) { blocks[i], blocks[j] = blocks[j], blocks[i] })
	local := bytes.Join(blocks, nil)
	b.SetBytes(int64(len(base)))
	b.ReportAllocs()
	for b.Loop() {
		merge.Text(base, local, remote)
	}
}

// BenchmarkMergeFileProcess times whole processes, alternating ours and
// git's; ms/slivingdoc and ms/git are median wall times, x-git their ratio
// (below 1: faster than git), x-git-cpu the same for user+system CPU time.
func BenchmarkMergeFileProcess(b *testing.B) {
	git, err := exec.LookPath("git")
	if err != nil {
		b.Skip("git not installed")
	}
	bin := cliBinary(b)
	for _, size := range mergeSizes {
		base, local, remote := MergeNote(size)
		dir := b.TempDir()
		paths := make([]string, 3)
		for i, c := range [][]byte{local, base, remote} {
			paths[i] = filepath.Join(dir, []string{"local", "base", "remote"}[i])
			if err := os.WriteFile(paths[i], c, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		ours := append([]string{bin, "merge-file"}, paths...)
		ref := append([]string{git, "merge-file", "-p", "-L", "local", "-L", "base", "-L", "remote"}, paths...)
		b.Run(sizeName(size), func(b *testing.B) {
			if o, g := mergeOutput(b, ours), mergeOutput(b, ref); !bytes.Equal(o, g) {
				b.Fatalf("slivingdoc and git disagree on the benchmark input")
			}
			var us, them, usCPU, themCPU, startCPU []time.Duration
			for b.Loop() {
				wall, cpu := timeProcess(b, ours)
				us, usCPU = append(us, wall), append(usCPU, cpu)
				wall, cpu = timeProcess(b, ref)
				them, themCPU = append(them, wall), append(themCPU, cpu)
				_, cpu = timeProcess(b, []string{bin, "version"})
				startCPU = append(startCPU, cpu)
			}
			b.ReportMetric(float64(median(us).Microseconds())/1000, "ms/slivingdoc")
			b.ReportMetric(float64(median(them).Microseconds())/1000, "ms/git")
			b.ReportMetric(float64(median(us))/float64(median(them)), "x-git")
			// CPU time (user+system) is steadier than wall time on a
			// loaded machine.
			b.ReportMetric(float64(median(usCPU))/float64(median(themCPU)), "x-git-cpu")
			// The CPU cost of starting the binary at all (slivingdoc
			// version): the floor under every merge-file run.
			b.ReportMetric(float64(median(startCPU).Microseconds())/1000, "ms-cpu/startup")
			b.ReportMetric(float64(median(usCPU).Microseconds())/1000, "ms-cpu/slivingdoc")
			b.ReportMetric(float64(median(themCPU).Microseconds())/1000, "ms-cpu/git")
		})
	}
}

func mergeOutput(b *testing.B, argv []string) []byte {
	out, err := exec.Command(argv[0], argv[1:]...).Output()
	if err != nil {
		b.Fatalf("%s: %v", argv[0], err)
	}
	return out
}

// timeProcess runs argv with stdout on /dev/null, as a user's redirect
// would, and returns its wall and CPU (user+system) time.
func timeProcess(b *testing.B, argv []string) (wall, cpu time.Duration) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer null.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout = null
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s: %v", argv[0], err)
	}
	wall = time.Since(start)
	return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}
