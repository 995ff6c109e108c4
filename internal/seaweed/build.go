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

// buildTimeout bounds one build; a cold build on 2 cores takes minutes.
const buildTimeout = 30 * time.Minute

var binary struct {
	once sync.Once
	path string
	err  error
}

// Binary returns the path of the weed executable, building it on first use.
// The result (success or failure) is memoised for the process.
func Binary() (string, error) {
	binary.once.Do(func() {
		binary.path, binary.err = findOrBuild()
	})
	return binary.path, binary.err
}

// CacheDir is where the binary of Version is kept.
func CacheDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("seaweed: no user cache dir: %w", err)
	}
	return filepath.Join(base, "slivingdoc", "test", "seaweedfs-"+Version), nil
}

func findOrBuild() (string, error) {
	if p := os.Getenv(EnvBinary); p != "" {
		if err := checkExecutable(p); err != nil {
			return "", fmt.Errorf("seaweed: %s=%s: %w", EnvBinary, p, err)
		}
		return p, nil
	}
	dir, err := CacheDir()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, exeName("weed"))
	if checkExecutable(bin) == nil {
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
		return bin, nil
	}
	if err := build(dir, bin); err != nil {
		return "", err
	}
	return bin, nil
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
func build(dir, bin string) error {
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	goTool, err := goExecutable()
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "slivingdoc-weed-build-")
	if err != nil {
		return fmt.Errorf("seaweed: build folder: %w", err)
	}
	defer os.RemoveAll(work)

	logPath := filepath.Join(dir, "build.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("seaweed: build log: %w", err)
	}
	defer logFile.Close()

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
	cmd := exec.CommandContext(ctx, goTool, "build", "-trimpath", "-o", tmp, "./weed")
	cmd.Dir = tree
	cmd.Env = goEnv()
	cmd.Stdout, cmd.Stderr = logFile, logFile
	fmt.Fprintf(logFile, "$ %s (in %s)\n", strings.Join(cmd.Args, " "), tree)
	if err := cmd.Run(); err != nil {
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
	runErr := cmd.Run()
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
