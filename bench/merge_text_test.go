package bench

// Benchmarks of the text merge (issue 3): merge.Text on notes of 100 KB to
// 5 MB with scattered edits on each side, in MB/s of note size; and whole
// processes, `slivingdoc merge-file` against `git merge-file -p` on the same
// files, timed alternately in the same run and quoted as a ratio.

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/merge"
)

func BenchmarkMergeText(b *testing.B) {
	for _, mc := range mergeProcessCases {
		base, local, remote := MergeNoteEdits(mc.size, mc.edits)
		b.Run(mc.name, func(b *testing.B) {
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

// mergeProcessCases are the inputs of BenchmarkMergeFileProcess: notes of
// 100 KB and more with 100 edited lines per side, and a 5 MB note with
// 10,000 edited lines per side.
var mergeProcessCases = []struct {
	name        string
	size, edits int
}{
	{"100KB", 100 << 10, MergeEdits},
	{"1MB", 1 << 20, MergeEdits},
	{"5MB", 5 << 20, MergeEdits},
	{"5MB-10000edits", 5 << 20, 10000},
}

// BenchmarkMergeFileProcess times whole processes, alternating ours and
// git's; ms/slivingdoc and ms/git are median wall times, x-git their ratio
// (below 1: faster than git), x-git-cpu the same for user+system CPU time.
// x-git-net is the CPU ratio once each program's cost of starting at all
// is taken off (each merging three one-line files), and MB-rss/... the
// median peak resident memory of each process.
func BenchmarkMergeFileProcess(b *testing.B) {
	git, err := exec.LookPath("git")
	if err != nil {
		b.Skip("git not installed")
	}
	bin := cliBinary(b)
	tiny := b.TempDir()
	tinyPaths := make([]string, 3)
	for i, name := range []string{"local", "base", "remote"} {
		tinyPaths[i] = filepath.Join(tiny, name)
		if err := os.WriteFile(tinyPaths[i], []byte("a\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, mc := range mergeProcessCases {
		base, local, remote := MergeNoteEdits(mc.size, mc.edits)
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
		oursStart := append([]string{bin, "merge-file"}, tinyPaths...)
		refStart := append([]string{git, "merge-file", "-p"}, tinyPaths...)
		b.Run(mc.name, func(b *testing.B) {
			if o, g := mergeOutput(b, ours), mergeOutput(b, ref); !bytes.Equal(o, g) {
				b.Fatalf("slivingdoc and git disagree on the benchmark input")
			}
			var us, them, usCPU, themCPU, usStart, themStart []time.Duration
			var usRSS, themRSS []int64
			for b.Loop() {
				wall, cpu := timeProcess(b, ours)
				us, usCPU = append(us, wall), append(usCPU, cpu)
				wall, cpu = timeProcess(b, ref)
				them, themCPU = append(them, wall), append(themCPU, cpu)
				_, cpu = timeProcess(b, oursStart)
				usStart = append(usStart, cpu)
				_, cpu = timeProcess(b, refStart)
				themStart = append(themStart, cpu)
				usRSS, themRSS = append(usRSS, peakRSS(b, ours)), append(themRSS, peakRSS(b, ref))
			}
			b.ReportMetric(float64(median(us).Microseconds())/1000, "ms/slivingdoc")
			b.ReportMetric(float64(median(them).Microseconds())/1000, "ms/git")
			b.ReportMetric(float64(median(us))/float64(median(them)), "x-git")
			// CPU time (user+system) is steadier than wall time on a
			// loaded machine.
			b.ReportMetric(float64(median(usCPU))/float64(median(themCPU)), "x-git-cpu")
			// The CPU cost of starting each binary at all: the floor
			// under every merge-file run.
			b.ReportMetric(float64(median(usStart).Microseconds())/1000, "ms-cpu/startup")
			b.ReportMetric(float64(median(themStart).Microseconds())/1000, "ms-cpu/git-startup")
			b.ReportMetric(float64(median(usCPU).Microseconds())/1000, "ms-cpu/slivingdoc")
			b.ReportMetric(float64(median(themCPU).Microseconds())/1000, "ms-cpu/git")
			// Net of start-up, paired run by run: the load of a shared
			// machine drifts less within one round than across rounds.
			usNet, themNet := make([]time.Duration, len(usCPU)), make([]time.Duration, len(themCPU))
			for i := range usCPU {
				usNet[i], themNet[i] = usCPU[i]-usStart[i], themCPU[i]-themStart[i]
			}
			b.ReportMetric(float64(median(usNet))/float64(max(median(themNet), 1)), "x-git-net")
			if usRSS[0] > 0 {
				b.ReportMetric(float64(medianInt(usRSS))/1024, "MB-rss/slivingdoc")
				b.ReportMetric(float64(medianInt(themRSS))/1024, "MB-rss/git")
			}
		})
	}
}

func medianInt(v []int64) int64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
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

// peakRSS runs argv under GNU time and returns its peak resident memory in
// KB, or 0 without /usr/bin/time. The rusage of a process started from
// here would not do: it is exec'd from a child that shares this process's
// memory, and Linux counts that memory in the child's peak.
func peakRSS(b *testing.B, argv []string) int64 {
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		return 0
	}
	out := filepath.Join(b.TempDir(), "rss")
	cmd := exec.Command("/usr/bin/time", append([]string{"-f", "%M", "-o", out}, argv...)...)
	if err := cmd.Run(); err != nil {
		b.Fatalf("time %s: %v", argv[0], err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		b.Fatal(err)
	}
	kb, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		b.Fatalf("time's output %q: %v", data, err)
	}
	return kb
}
