package npm_test

// `go install github.com/slivingdoc/slivingdoc/cmd/slivingdoc@latest` works
// for a user: go.mod has no replace directive (go install refuses them), no
// package outside the standard library needs cgo, and the module as it would
// be published resolves and builds. The test publishes it to a file:// module
// proxy (dependencies come from the local module cache, so no network).

import (
	"archive/zip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/slivingdoc/slivingdoc"

func goCmd(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func TestGoModHasNoReplace(t *testing.T) {
	var mod struct {
		Replace []json.RawMessage
	}
	if err := json.Unmarshal([]byte(goCmd(t, repoRoot, nil, "mod", "edit", "-json")), &mod); err != nil {
		t.Fatal(err)
	}
	if len(mod.Replace) != 0 {
		t.Errorf("go.mod has replace directives %s; go install ...@latest refuses them", mod.Replace)
	}
}

func TestNoCgoOutsideStandardLibrary(t *testing.T) {
	// With cgo on, as a user's default is: any non-std package with cgo files
	// would need a C toolchain and break the static release builds.
	out := goCmd(t, repoRoot, []string{"CGO_ENABLED=1"}, "list", "-deps",
		"-f", "{{if and (not .Standard) .CgoFiles}}{{.ImportPath}}{{end}}", "./cmd/slivingdoc")
	if s := strings.TrimSpace(out); s != "" {
		t.Errorf("packages with cgo: %s", s)
	}
}

func TestGoInstallLatest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the module from a fresh module cache")
	}
	const version = "v0.1.0"
	tmp := t.TempDir()
	proxy := filepath.Join(tmp, "proxy", module, "@v")
	if err := os.MkdirAll(proxy, 0o755); err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{
		"list":            version + "\n",
		version + ".info": `{"Version":"` + version + `","Time":"2026-01-01T00:00:00Z"}`,
		version + ".mod":  string(gomod),
	} {
		if err := os.WriteFile(filepath.Join(proxy, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeModuleZip(t, filepath.Join(proxy, version+".zip"), version)

	modcache := strings.TrimSpace(goCmd(t, repoRoot, nil, "env", "GOMODCACHE"))
	gobin := filepath.Join(tmp, "bin")
	env := []string{
		"GOPROXY=file://" + filepath.ToSlash(filepath.Join(tmp, "proxy")) + ",file://" + filepath.ToSlash(filepath.Join(modcache, "cache", "download")),
		"GOSUMDB=off", "GOFLAGS=-modcacherw -trimpath",
		"GOMODCACHE=" + filepath.Join(tmp, "modcache"), "GOBIN=" + gobin,
		"GOWORK=off", "GOTOOLCHAIN=local",
	}
	goCmd(t, tmp, env, "install", module+"/cmd/slivingdoc@latest")

	out, err := exec.Command(filepath.Join(gobin, "slivingdoc"), "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "slivingdoc ") {
		t.Fatalf("installed binary: version printed %q, %v", out, err)
	}
	info := goCmd(t, tmp, nil, "version", "-m", filepath.Join(gobin, "slivingdoc"))
	if !strings.Contains(info, "\tmod\t"+module+"\t"+version+"\t") {
		t.Errorf("installed from the wrong module version:\n%s", info)
	}
}

// writeModuleZip zips the files a commit of the working tree would publish
// (tracked, or untracked and not ignored) the way the module proxy serves
// them: every path under module@version/.
func writeModuleZip(t *testing.T, path, version string) {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = repoRoot
	list, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for _, name := range strings.Split(strings.TrimRight(string(list), "\x00"), "\x00") {
		src, err := os.Open(filepath.Join(repoRoot, filepath.FromSlash(name)))
		if os.IsNotExist(err) {
			continue // deleted in the working tree
		}
		if err != nil {
			t.Fatal(err)
		}
		w, err := zw.Create(fmt.Sprintf("%s@%s/%s", module, version, name))
		if err == nil {
			_, err = io.Copy(w, src)
		}
		src.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
