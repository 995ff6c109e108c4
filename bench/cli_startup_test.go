package bench

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkCLIFixedCost measures what a CLI process pays whatever it does,
// in CPU (user + system) of whole processes, each row beside its reference
// in the same run, the two alternated call by call so that both see the
// same load:
//
//   - version: `slivingdoc version` against a Go hello world built the
//     same way (CGO_ENABLED=0, -trimpath, -ldflags '-s -w', as make build);
//     target (design.md, Performance targets) <= 2x;
//   - imports-only: a program importing every package cmd/slivingdoc
//     imports and running nothing (importsOnly), against the hello world:
//     what the runtime's start and the dependencies' initialisation cost
//     before any code of ours runs, the floor of the version row;
//   - merge-file: `slivingdoc merge-file` on a 3-line clean merge against
//     `git merge-file -p` on the same files; target <= 2x;
//   - status, pull, commit: the no-op command on 1,000 files x 2 KB (file
//     store, stat cache warm) against `git status --porcelain` on a copy of
//     the tree; target <= 1.5x;
//   - commit-append: one line appended to one file, then `slivingdoc
//     commit`, against the same append in the copy then `git commit -qam`;
//     target <= 1.2x. The append is done by the benchmark, outside both
//     processes.
//
// Each row reports the medians (cpu-ms, ref-cpu-ms) and the median and
// mean of the pairwise ratios (x-ref, x-ref-mean), so a drift of the
// machine's speed during the run cancels; which of a pair runs first
// alternates. The version-inittrace row reports what package
// initialisation costs one process (init-ms, init-KB) and logs the modules
// that cost most (-v): the part of the version row that only the
// dependencies can change. SLIVINGDOC_BENCH_BIN measures another build of
// slivingdoc, SLIVINGDOC_BENCH_FILES another size of notebook (10000: the
// design's second size).
func BenchmarkCLIFixedCost(b *testing.B) {
	dir := b.TempDir()
	bin := filepath.Join(dir, "slivingdoc")
	if given := os.Getenv("SLIVINGDOC_BENCH_BIN"); given != "" {
		installCopy(b, given, bin)
	} else {
		releaseBuild(b, bin, "github.com/slivingdoc/slivingdoc/cmd/slivingdoc", "")
	}
	hello := filepath.Join(dir, "hello")
	releaseBuild(b, hello, ".", helloWorld(b))

	b.Run("row=version", func(b *testing.B) {
		pairs(b, func() time.Duration { return cpuOf(b, "", nil, bin, "version") },
			func() time.Duration { return cpuOf(b, "", nil, hello) })
	})
	b.Run("row=version-inittrace", func(b *testing.B) { initTrace(b, bin) })
	b.Run("row=imports-only", func(b *testing.B) {
		imports := filepath.Join(dir, "imports-only")
		importsOnly(b, imports)
		pairs(b, func() time.Duration { return cpuOf(b, "", nil, imports) },
			func() time.Duration { return cpuOf(b, "", nil, hello) })
	})
	b.Run("row=merge-file", func(b *testing.B) {
		if _, err := exec.LookPath("git"); err != nil {
			b.Skip("git, the reference of this row, is not installed")
		}
		three := writeThreeLineMerge(b)
		pairs(b, func() time.Duration { return cpuOf(b, "", nil, bin, append([]string{"merge-file"}, three...)...) },
			func() time.Duration {
				return cpuOf(b, "", nil, "git", append([]string{"merge-file", "-p"}, three...)...)
			})
	})

	files := 1000
	if v := os.Getenv("SLIVINGDOC_BENCH_FILES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("SLIVINGDOC_BENCH_FILES=%q: want a number of files", v)
		}
		files = n
	}
	nb := newCLINotebook(b, bin, cliStores[0])
	nb.run("pull", nb.dir)
	names := fill(b, nb.dir, files, 2048)
	nb.run("commit", nb.dir, "-m", "tree")
	nb.run("pull", nb.dir)
	git := newGitReference(b, nb.dir)
	gitStatus := func() time.Duration { return cpuOf(b, git.dir, nil, "git", "status", "--porcelain") }
	for _, row := range []struct {
		name string
		args []string
	}{{"status", []string{"status", nb.dir}}, {"pull", []string{"pull", nb.dir}}, {"commit", []string{"commit", nb.dir, "-m", "nothing"}}} {
		b.Run(fmt.Sprintf("row=%s/files=%d", row.name, files), func(b *testing.B) {
			pairs(b, func() time.Duration { return cpuOf(b, "", nb.env, bin, row.args...) }, gitStatus)
		})
	}
	b.Run(fmt.Sprintf("row=commit-append/files=%d", files), func(b *testing.B) {
		n := 0
		pairs(b, func() time.Duration {
			n++
			appendTo(b, filepath.Join(nb.dir, filepath.FromSlash(names[0])), fmt.Appendf(nil, "line %d\n", n))
			return cpuOf(b, "", nb.env, bin, "commit", nb.dir, "-m", "one line")
		}, func() time.Duration {
			appendTo(b, filepath.Join(git.dir, filepath.FromSlash(names[0])), fmt.Appendf(nil, "line %d\n", n))
			return cpuOf(b, git.dir, nil, "git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "commit", "-qam", "one line")
		})
	})
}

// initTrace runs `version` under the runtime's init trace
// (GODEBUG=inittrace=1) once per iteration and reports the median package
// initialisation of a process: its clock (init-ms, which a loaded machine
// stretches) and its allocations (init-KB, which it does not). The
// modules that cost most are logged (go test -v) with their median clock,
// so the figures say whose initialisation remains.
func initTrace(b *testing.B, bin string) {
	var clocks, kbs []float64
	perModule := map[string][]float64{}
	for b.Loop() {
		cmd := exec.Command(bin, "version")
		cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			b.Fatalf("version: %v\n%s", err, stderr.String())
		}
		var clock, allocated float64
		byModule := map[string]float64{}
		for line := range strings.Lines(stderr.String()) {
			// "init PKG @T ms, C ms clock, B bytes, A allocs"
			f := strings.Fields(line)
			if len(f) != 11 || f[0] != "init" || f[6] != "clock," {
				continue
			}
			c, err1 := strconv.ParseFloat(f[4], 64)
			n, err2 := strconv.ParseFloat(f[7], 64)
			if err1 != nil || err2 != nil {
				b.Fatalf("unreadable init trace line %q", line)
			}
			clock += c
			allocated += n
			byModule[moduleOf(f[1])] += c
		}
		if clock == 0 {
			b.Fatalf("no init trace on stderr:\n%s", stderr.String())
		}
		clocks, kbs = append(clocks, clock), append(kbs, allocated/1024)
		for m, c := range byModule {
			perModule[m] = append(perModule[m], c)
		}
	}
	b.ReportMetric(medianFloat(clocks), "init-ms")
	b.ReportMetric(medianFloat(kbs), "init-KB")
	type cost struct {
		module string
		ms     float64
	}
	var costs []cost
	for m, cs := range perModule {
		costs = append(costs, cost{m, medianFloat(cs)})
	}
	slices.SortFunc(costs, func(x, y cost) int { return cmp.Compare(y.ms, x.ms) })
	for _, c := range costs[:min(len(costs), 8)] {
		b.Logf("init %-45s %.3f ms (median)", c.module, c.ms)
	}
}

// moduleOf names the module of an import path well enough to group the
// init trace: the standard library as one, github.com/x/y, golang.org/x/y.
func moduleOf(pkg string) string {
	parts := strings.Split(pkg, "/")
	switch {
	case pkg == "main":
		return "github.com/slivingdoc/slivingdoc"
	case !strings.Contains(parts[0], "."):
		return "std"
	case parts[0] == "github.com" && len(parts) >= 3 && parts[1] == "aws":
		return "github.com/aws (the AWS SDK)"
	case len(parts) >= 3:
		return strings.Join(parts[:3], "/")
	}
	return pkg
}

func medianFloat(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// importsOnly builds, as releaseBuild does, a program that imports every
// package cmd/slivingdoc imports and runs nothing, and installs it at out:
// the runtime's start and every package initialisation of a binary that
// links what ours links, the floor our own code starts from. The program
// is never written into the module: go build reads it through an overlay,
// at a path inside the module so that it may import our internal packages.
func importsOnly(b *testing.B, out string) {
	b.Helper()
	list, err := exec.Command("go", "list", "-f", "{{.Module.Dir}}\n{{join .Imports \"\\n\"}}", "github.com/slivingdoc/slivingdoc/cmd/slivingdoc").Output()
	if err != nil {
		b.Fatalf("go list cmd/slivingdoc: %v", err)
	}
	lines := strings.Fields(string(list))
	var src strings.Builder
	src.WriteString("package main\n\nimport (\n")
	for _, p := range lines[1:] {
		fmt.Fprintf(&src, "\t_ %q\n", p)
	}
	src.WriteString(")\n\nfunc main() {}\n")
	dir := b.TempDir()
	mainGo := filepath.Join(dir, "main.go")
	if err := os.WriteFile(mainGo, []byte(src.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	overlay := filepath.Join(dir, "overlay.json")
	virtual := filepath.Join(lines[0], "cmd", "slivingdoc-imports-only", "main.go")
	if err := os.WriteFile(overlay, fmt.Appendf(nil, `{"Replace": {%q: %q}}`, virtual, mainGo), 0o644); err != nil {
		b.Fatal(err)
	}
	releaseBuild(b, out, "github.com/slivingdoc/slivingdoc/cmd/slivingdoc-imports-only", "", "-overlay", overlay)
}

// writeThreeLineMerge writes the merge-file row's inputs, local, base and
// remote in the command's order: three lines, one side changing the first,
// the other the last (a clean merge).
func writeThreeLineMerge(b *testing.B) []string {
	b.Helper()
	dir := b.TempDir()
	var paths []string
	for _, f := range []struct{ name, text string }{{"local", "A\nb\nc\n"}, {"base", "a\nb\nc\n"}, {"remote", "a\nb\nC\n"}} {
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, []byte(f.text), 0o644); err != nil {
			b.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// releaseBuild builds pkg as make build does, then installs the binary at
// out as a copy (installCopy). src, when set, is the directory to build in
// (a module of its own); flags go to go build.
func releaseBuild(b *testing.B, out, pkg, src string, flags ...string) {
	b.Helper()
	built := out + ".built"
	cmd := exec.Command("go", append(append([]string{"build"}, flags...), "-trimpath", "-ldflags", "-s -w", "-o", built, pkg)...)
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if o, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build %s: %v\n%s", pkg, err, o)
	}
	installCopy(b, built, out)
}

// installCopy writes a copy of the binary src at dst, as an installer or
// cp does, so that every binary a row compares is in the state a user's
// installed one is. The file's state in the page cache changes what a
// process start costs: the Go linker writes its output through a memory
// mapping, page by page, and on Linux 6.18 with ext4 a process of the
// linker's file cost 1.23x the CPU of the same binary copied (`version`,
// docs/benchmarks.md, "Start-up: what a binary with our dependencies
// costs"); a file written in large writes, or read back from disk, is held
// in larger pages. Timing one binary as linked against another as copied
// would measure that, not the program.
func installCopy(b *testing.B, src, dst string) {
	b.Helper()
	in, err := os.Open(src)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil { // copy_file_range on Linux, as cp
		b.Fatal(err)
	}
	if err := out.Close(); err != nil {
		b.Fatal(err)
	}
}

// helloWorld writes the reference program, a module of its own, and
// returns its directory.
func helloWorld(b *testing.B) string {
	b.Helper()
	dir := filepath.Join(b.TempDir(), "hello")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	for name, text := range map[string]string{
		"go.mod":  "module hello\n\ngo 1.26\n",
		"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// cpuOf runs one process to its end and returns the CPU it used (user and
// system, the kernel's accounting of the finished process).
func cpuOf(b *testing.B, dir string, env []string, name string, args ...string) time.Duration {
	b.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
	}
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// pairs runs a and its reference ref in turn once per iteration and
// reports both medians and the median (x-ref) and mean (x-ref-mean) of the
// pairwise ratios.
func pairs(b *testing.B, a, ref func() time.Duration) {
	a()
	ref() // warm the page cache for both
	var as, rs []time.Duration
	var ratios []float64
	first := true
	for b.Loop() {
		// Which of the two runs first alternates, so that an advantage of
		// running first or second, where the machine gives one, cancels
		// out of the ratio.
		var x, y time.Duration
		if first {
			x, y = a(), ref()
		} else {
			y, x = ref(), a()
		}
		first = !first
		as, rs = append(as, x), append(rs, y)
		if y > 0 {
			ratios = append(ratios, float64(x)/float64(y))
		}
	}
	b.ReportMetric(float64(median(as).Microseconds())/1000, "cpu-ms")
	b.ReportMetric(float64(median(rs).Microseconds())/1000, "ref-cpu-ms")
	if len(ratios) > 0 {
		b.ReportMetric(medianFloat(ratios), "x-ref")
		mean := 0.0
		for _, r := range ratios {
			mean += r
		}
		b.ReportMetric(mean/float64(len(ratios)), "x-ref-mean")
	}
}
