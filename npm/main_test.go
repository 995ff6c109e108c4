package npm_test

// Shared fixtures: one host-only release built through the Makefile, its
// npm tarballs, and throwaway npm projects they are installed into.

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

var (
	releaseDirFlag     = flag.String("release-dir", "", "check the binaries `make release` wrote to this directory instead of building the host's")
	releaseVersionFlag = flag.String("release-version", "", "the VERSION of -release-dir")
)

// testVersion is stamped into the host release the tests build; a
// pre-release with a dot exercises the whole semver grammar in file names.
const testVersion = "0.0.0-test.1"

var (
	repoRoot string // the module root, where the Makefile is
	scratch  string // removed after the run; holds everything the fixtures build
)

func TestMain(m *testing.M) {
	flag.Parse()
	var err error
	if repoRoot, err = filepath.Abs(".."); err == nil {
		scratch, err = os.MkdirTemp("", "slivingdoc-dist-")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(scratch)
	os.Exit(code)
}

// hostPlatform is the host in the Makefile's PLATFORMS notation, or "" when
// no release binary is built for it.
func hostPlatform() string {
	p := runtime.GOOS + "/" + runtime.GOARCH
	switch p {
	case "linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64":
		return p
	case "linux/arm":
		return "linux/arm/7"
	}
	return ""
}

// assetOf is the os-arch part of a release file name for a PLATFORMS entry:
// linux/arm/7 -> linux-armv7.
func assetOf(platform string) string {
	return strings.NewReplacer("/arm/7", "-armv7", "/", "-").Replace(platform)
}

// makeTarget runs make in the repository root and returns its output.
func makeTarget(args ...string) (string, error) {
	cmd := exec.Command("make", append([]string{"-C", repoRoot, "--no-print-directory"}, args...)...)
	// Under `make test` the outer make's flags and variables (MAKEFLAGS)
	// would leak into this one; it gets only what the test says.
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "MAKEFLAGS" && k != "MFLAGS" && k != "MAKELEVEL" && k != "MAKEOVERRIDES" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// A release is what `make release` (and `make npm-pack`) produced.
type release struct {
	dir, version string
	// The copies of server.json and docs/mcp-hosts.md given to the release
	// as VERSION_FILES, before and after it rewrote them.
	versionFiles map[string][2]string
}

// theRelease is the release under test: -release-dir when `make release`
// runs the checks, otherwise the host's, built once per test binary.
func theRelease(t *testing.T) *release {
	t.Helper()
	if *releaseDirFlag != "" {
		return &release{dir: *releaseDirFlag, version: *releaseVersionFlag}
	}
	if hostPlatform() == "" {
		t.Skipf("no release binary is built for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	r, err := hostRelease()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var hostRelease = sync.OnceValues(func() (*release, error) {
	host := hostPlatform()
	if host == "" {
		return nil, fmt.Errorf("no release target for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	r := &release{dir: filepath.Join(scratch, "dist"), version: testVersion, versionFiles: map[string][2]string{}}
	// Copies, so the test proves the rewrite without touching the tree.
	copies := filepath.Join(scratch, "version-files")
	if err := os.MkdirAll(copies, 0o755); err != nil {
		return nil, err
	}
	for name, before := range versionFileFixtures() {
		path := filepath.Join(copies, name)
		if err := os.WriteFile(path, []byte(before), 0o644); err != nil {
			return nil, err
		}
		r.versionFiles[path] = [2]string{before}
	}
	var files []string
	for path := range r.versionFiles {
		files = append(files, path)
	}
	out, err := makeTarget("release", "VERSION="+testVersion, "DIST="+r.dir, "PLATFORMS="+host,
		"VERSION_FILES="+strings.Join(files, " "))
	if err != nil {
		return nil, fmt.Errorf("make release: %v\n%s", err, out)
	}
	for path, v := range r.versionFiles {
		after, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		r.versionFiles[path] = [2]string{v[0], string(after)}
	}
	return r, nil
})

// needNode stops a test that needs Node.js and npm where they are missing;
// in CI they are part of the machine, so there it fails instead.
func needNode(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"node", "npm", "npx"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is required in CI: %v", tool, err)
			}
			t.Skipf("%s not installed: %v", tool, err)
		}
	}
}

// npmEnv keeps npm off the network and out of the user's cache: our packages
// come from local tarballs, and the launcher must work offline.
func npmEnv(extra ...string) []string {
	env := append(os.Environ(),
		"npm_config_cache="+filepath.Join(scratch, "npm-cache"),
		"npm_config_offline=true",
		"npm_config_registry=http://127.0.0.1:9/",
		"npm_config_audit=false",
		"npm_config_fund=false",
		"npm_config_update_notifier=false",
		"npm_config_yes=true",
	)
	return append(env, extra...)
}

// packTarballs runs `make npm-pack` over a release directory and returns the
// tarballs pack.js reported.
func packTarballs(dist, version, platforms string) ([]string, error) {
	out, err := makeTarget("-s", "npm-pack", "VERSION="+version, "DIST="+dist, "PLATFORMS="+platforms)
	if err != nil {
		return nil, fmt.Errorf("make npm-pack: %v\n%s", err, out)
	}
	var tarballs []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasSuffix(line, ".tgz") {
			tarballs = append(tarballs, line)
		}
	}
	if len(tarballs) < 2 {
		return nil, fmt.Errorf("make npm-pack made %d tarballs, want the launcher and a platform package:\n%s", len(tarballs), out)
	}
	return tarballs, nil
}

// hostTarballs are the npm tarballs of the host release.
func hostTarballs(t *testing.T) []string {
	t.Helper()
	needNode(t)
	tarballs, err := hostTarballsOnce()
	if err != nil {
		t.Fatal(err)
	}
	return tarballs
}

var hostTarballsOnce = sync.OnceValues(func() ([]string, error) {
	r, err := hostRelease()
	if err != nil {
		return nil, err
	}
	return packTarballs(r.dir, r.version, hostPlatform())
})

// installProject makes a fresh npm project with the tarballs installed, as
// a user's `npm install slivingdoc` would lay it out, and returns its root.
func installProject(t *testing.T, tarballs []string) string {
	t.Helper()
	dir := t.TempDir()
	if err := installInto(dir, tarballs); err != nil {
		t.Fatal(err)
	}
	return dir
}

func installInto(dir string, tarballs []string) error {
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"user-project","private":true}`+"\n"), 0o644); err != nil {
		return err
	}
	cmd := exec.Command("npm", append([]string{"install", "--ignore-scripts"}, tarballs...)...)
	cmd.Dir, cmd.Env = dir, npmEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm install: %v\n%s", err, out)
	}
	return nil
}

// result is one finished process.
type result struct {
	stdout, stderr string
	code           int
	state          *os.ProcessState
}

// runIn runs a command in dir with the npm environment and stdin, and
// reports how it ended; only a failure to start is fatal.
func runIn(t *testing.T, dir, stdin string, name string, args ...string) result {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, npmEnv()
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return result{stdout.String(), stderr.String(), cmd.ProcessState.ExitCode(), cmd.ProcessState}
}

// launcherToken is the TOKEN of a launcher refusal ("slivingdoc: TOKEN: ..."),
// or "" when stderr holds none.
func launcherToken(stderr string) string {
	rest, ok := strings.CutPrefix(stderr, "slivingdoc: ")
	if !ok {
		return ""
	}
	token, _, ok := strings.Cut(rest, ": ")
	if !ok || strings.ToUpper(token) != token || strings.ContainsAny(token, " \n") {
		return ""
	}
	return token
}
