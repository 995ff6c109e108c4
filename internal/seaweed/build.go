package seaweed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/osfile"
)

// The pinned SeaweedFS module. Changing Version changes the cache folder, so
// a new version is built next to the old one instead of over it.
const (
	Module  = "github.com/seaweedfs/seaweedfs"
	Version = "v0.0.0-20261109003541-7506e5f91cd6"
)

// EnvBinary names a prebuilt weed binary to use instead of building one.
const EnvBinary = "SLIVINGDOC_WEED"

var binary struct {
	once sync.Once
	path string
	err  error
}

// Binary returns the path of the weed executable, building it on first use.
// The result (success or failure) is memoised for the process.
func Binary() (string, error) {
	binary.once.Do(func() {
		binary.path, binary.err = findOrBuild(io.Discard)
	})
	return binary.path, binary.err
}

// Build is Binary for a person at a terminal (`make weed`): it finds or
// builds the executable and reports each step, and the build's progress
// every half minute, on progress. make test runs it first, so the minutes
// of a cold build count against no test package's timeout.
func Build(progress io.Writer) (string, error) {
	return findOrBuild(progress)
}

// CacheDir is where the binary of Version is kept.
func CacheDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("seaweed: no user cache dir: %w", err)
	}
	return filepath.Join(base, "slivingdoc", "test", "seaweedfs-"+Version), nil
}

func findOrBuild(progress io.Writer) (string, error) {
	if p := os.Getenv(EnvBinary); p != "" {
		if err := checkExecutable(p); err != nil {
			return "", fmt.Errorf("seaweed: %s=%s: %w", EnvBinary, p, err)
		}
		fmt.Fprintf(progress, "SeaweedFS: %s (from %s)\n", p, EnvBinary)
		return p, nil
	}
	dir, err := CacheDir()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, exeName("weed"))
	if checkExecutable(bin) == nil {
		fmt.Fprintf(progress, "SeaweedFS: %s (built before)\n", bin)
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("seaweed: cache dir: %w", err)
	}
	unlock, err := lockFile(filepath.Join(dir, "build.lock"))
	if err != nil {
		return "", fmt.Errorf("seaweed: lock the build: %w", err)
	}
	defer unlock()
	// Another test binary may have finished the build while we waited.
	if checkExecutable(bin) == nil {
		fmt.Fprintf(progress, "SeaweedFS: %s (built by another process)\n", bin)
		return bin, nil
	}
	if err := removeLeftovers(dir); err != nil {
		return "", fmt.Errorf("seaweed: clean up an interrupted build: %w", err)
	}
	if err := build(dir, bin, progress); err != nil {
		return "", err
	}
	fmt.Fprintf(progress, "SeaweedFS: %s (built)\n", bin)
	return bin, nil
}

// workDirName is the folder under the cache dir where the module is copied
// and built. It lives there, not in the temp dir, so that the next build
// (holding the lock) finds and removes what a killed build left.
const workDirName = "build-work"

// removeLeftovers deletes what an interrupted build left in dir: the copied
// module and half-written binaries. The caller holds the build lock, so no
// live build owns them. The compiled packages stay in the Go build cache,
// so the next build resumes where the killed one stopped.
func removeLeftovers(dir string) error {
	if err := os.RemoveAll(filepath.Join(dir, workDirName)); err != nil {
		return err
	}
	tmps, err := filepath.Glob(filepath.Join(dir, ".weed-*.tmp"))
	if err != nil {
		return err
	}
	for _, t := range tmps {
		if err := os.Remove(t); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// lockFile takes the exclusive build lock on path, waiting for it. The
// kernel drops the lock when the holder dies (internal/osfile), so a killed
// build never leaves a stale lock behind.
func lockFile(path string) (unlock func(), err error) {
	l, err := osfile.Acquire(path, 0o644)
	if err != nil {
		return nil, err
	}
	return func() { _ = l.Release() }, nil
}

// build compiles weed into bin. The binary is written under a temporary
// name and renamed, so a reader never sees a half-written executable.
func build(dir, bin string, progress io.Writer) error {
	// No deadline of its own: a cold build on 2 loaded cores took more than
	// 30 minutes (a fixed bound killed it). Tests are bounded by their
	// binary's -timeout, make weed by the person or CI running it; either
	// way the go commands die with this process.
	ctx := context.Background()
	goTool, err := goExecutable()
	if err != nil {
		return err
	}
	work := filepath.Join(dir, workDirName)
	if err := os.MkdirAll(work, 0o755); err != nil {
		return fmt.Errorf("seaweed: build folder: %w", err)
	}
	defer os.RemoveAll(work)

	logPath := filepath.Join(dir, "build.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("seaweed: build log: %w", err)
	}
	defer logFile.Close()
	fmt.Fprintf(progress, "SeaweedFS: building %s@%s; a cold build takes 10-60 minutes on 2 cores, by their load, and about 4.5 GB of Go caches (log: %s)\n",
		Module, Version, logPath)

	fmt.Fprintf(progress, "SeaweedFS: downloading the module\n")
	src, err := download(ctx, goTool, work, logFile)
	if err != nil {
		return buildError("download "+Module+"@"+Version, err, logPath)
	}
	tree := filepath.Join(work, "seaweedfs")
	if err := copyTree(src, tree); err != nil {
		return buildError("copy the module", err, logPath)
	}
	tmp := filepath.Join(dir, fmt.Sprintf(".weed-%d.tmp", os.Getpid()))
	defer os.Remove(tmp)
	// -v names each package as it is compiled: the progress report counts them.
	cmd := exec.CommandContext(ctx, goTool, "build", "-v", "-trimpath", "-o", tmp, "./weed")
	cmd.Dir = tree
	// The go command's own scratch folder goes under work too: a build
	// killed outright cannot remove it, the next one does.
	goTmp := filepath.Join(work, "gotmp")
	if err := os.MkdirAll(goTmp, 0o755); err != nil {
		return fmt.Errorf("seaweed: build folder: %w", err)
	}
	cmd.Env = append(goEnv(), "GOTMPDIR="+goTmp)
	lines := &lineCounter{w: logFile}
	cmd.Stdout, cmd.Stderr = lines, lines
	fmt.Fprintf(logFile, "$ %s (in %s)\n", strings.Join(cmd.Args, " "), tree)
	fmt.Fprintf(progress, "SeaweedFS: compiling (dependencies download on the way)\n")
	stop := reportEvery(progress, 30*time.Second, func(elapsed time.Duration) string {
		return fmt.Sprintf("SeaweedFS: still building, %d packages compiled, %s", lines.count(), elapsed.Round(time.Second))
	})
	err = runChild(cmd)
	stop()
	if err != nil {
		return buildError("go build ./weed", err, logPath)
	}
	if err := os.Rename(tmp, bin); err != nil {
		return buildError("publish the binary", err, logPath)
	}
	return nil
}

// download fetches the module into the module cache (usually a no-op) and
// returns its read-only folder there.
func download(ctx context.Context, goTool, work string, log io.Writer) (string, error) {
	cmd := exec.CommandContext(ctx, goTool, "mod", "download", "-json", Module+"@"+Version)
	cmd.Dir = work // outside any module, so the project's go.mod is not involved
	cmd.Env = goEnv()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, log
	runErr := runChild(cmd)
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(out.Bytes(), &info); err != nil && runErr == nil {
		return "", fmt.Errorf("decode go mod download output: %w", err)
	}
	if info.Error != "" {
		return "", errors.New(info.Error)
	}
	if runErr != nil {
		return "", runErr
	}
	if info.Dir == "" {
		return "", errors.New("go mod download reported no folder")
	}
	return info.Dir, nil
}

// runChild runs a go command that must not outlive this process: on Linux
// the kernel kills it when this process dies (startBuildChild), so a test
// binary that times out, or a `make weed` stopped with ^C, leaves no build
// running.
func runChild(cmd *exec.Cmd) error {
	if err := startBuildChild(cmd); err != nil {
		return err
	}
	return cmd.Wait()
}

// lineCounter passes writes through and counts the newlines in them.
type lineCounter struct {
	w  io.Writer
	mu sync.Mutex
	n  int
}

func (c *lineCounter) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.n += bytes.Count(p, []byte{'\n'})
	c.mu.Unlock()
	return c.w.Write(p)
}

func (c *lineCounter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// reportEvery writes line(elapsed) to w every period until stop is called.
// It only informs a person; nothing waits on it.
func reportEvery(w io.Writer, period time.Duration, line func(time.Duration) string) (stop func()) {
	if w == io.Discard {
		return func() {}
	}
	start := time.Now()
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				fmt.Fprintln(w, line(time.Since(start)))
			}
		}
	}()
	return func() { close(done); <-finished }
}

// goEnv is the environment of the go commands: module mode regardless of the
// caller's workspace or vendor settings, no VCS stamping (the copy is no
// checkout).
func goEnv() []string {
	env := os.Environ()
	return append(env, "GOFLAGS=-mod=mod -buildvcs=false", "GOWORK=off", "GO111MODULE=on")
}

func goExecutable() (string, error) {
	p, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("seaweed: building SeaweedFS needs the go command on PATH: %w", err)
	}
	return p, nil
}

// copyTree copies the module folder, making everything writable: the module
// cache is read-only and the build may need to update go.sum.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type().IsRegular():
			return copyFile(path, target)
		default:
			return nil // module zips hold no symlinks or devices
		}
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	info, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, info.Mode().Perm()|0o200)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func checkExecutable(p string) error {
	info, err := os.Stat(p)
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() || (runtime.GOOS != "windows" && info.Mode().Perm()&0o111 == 0) {
		return fmt.Errorf("%s is not an executable file", p)
	}
	return nil
}

func exeName(name string) string {
	if runtime.GOOS == "windows" {
		return name + ".exe"
	}
	return name
}

// buildError names the failed step and quotes the end of the build log, which
// is where the go command explains itself.
func buildError(step string, err error, logPath string) error {
	return fmt.Errorf("seaweed: cannot build SeaweedFS %s: %s: %w\n--- %s (tail) ---\n%s",
		Version, step, err, logPath, tail(logPath, 40))
}

// tail returns the last n lines of a file, or a note why it cannot.
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
