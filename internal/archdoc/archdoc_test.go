package archdoc_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/slivingdoc/slivingdoc/"

// goList returns, for every package of the module, its path relative to
// the module root and its non-test imports.
func goList(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkgs[strings.TrimPrefix(f[0], module)] = f[1:]
	}
	return pkgs
}

// mapped returns the packages the package map of docs/architecture.md names.
func mapped(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	row := regexp.MustCompile("^\\| `([a-z0-9/]+)` \\|")
	var names []string
	inMap := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			inMap = line == "## Package map"
			continue
		}
		if m := row.FindStringSubmatch(line); inMap && m != nil {
			names = append(names, m[1])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Fatal("docs/architecture.md has no package map rows")
	}
	return names
}

func TestPackageMapNamesEveryPackage(t *testing.T) {
	pkgs := goList(t)
	names := mapped(t)
	for _, n := range names {
		if _, ok := pkgs[n]; !ok {
			t.Errorf("docs/architecture.md names %s, which is not a package of the module", n)
		}
	}
	for p := range pkgs {
		if !slices.Contains(names, p) {
			t.Errorf("package %s is missing from the package map of docs/architecture.md", p)
		}
	}
}

// engineLayers are the packages below the engine (server), bottom
// first: each may import only those before it.
var engineLayers = []string{"server/workdir", "server/pstate", "server/storeview", "server/objcache", "server/history", "server/diag", "server/rules", "server/plan", "server/dirstate", "server/pending", "server/dircall", "server/rewrite", "server/pull", "server/build", "server/commit"}

// The layering the page states: imports go one way, remote imports no
// backend, and of the product's packages only remote/s3store imports the
// AWS SDK (the SeaweedFS harness and the load generator use it as a client).
func TestLayering(t *testing.T) {
	below := func(p string, prefixes ...string) bool {
		for _, pre := range prefixes {
			if p == pre || strings.HasPrefix(p, pre+"/") {
				return true
			}
		}
		return false
	}
	for p, imports := range goList(t) {
		for _, imp := range imports {
			dep, ours := strings.CutPrefix(imp, module)
			switch {
			case strings.HasPrefix(imp, "github.com/aws/"):
				if p != "remote/s3store" && !below(p, "internal/seaweed", "bench") {
					t.Errorf("%s imports the AWS SDK (%s); only remote/s3store may", p, imp)
				}
			case !ours:
			case below(p, "cas", "merge", "remote", "publish") && below(dep, "server", "cmd", "bench"):
				t.Errorf("%s imports %s: nothing below server knows the engine, MCP or the CLI", p, dep)
			case below(p, "cas", "merge", "remote") && below(dep, "publish"):
				t.Errorf("%s imports %s: publish sits above merge and remote", p, dep)
			case below(p, "cas") && below(dep, "merge", "remote"):
				t.Errorf("%s imports %s: cas is the bottom layer", p, dep)
			case p == "remote" && below(dep, "remote"):
				t.Errorf("remote imports %s: the boundary imports no backend", dep)
			case below(p, "server") && below(dep, "cmd", "bench"):
				t.Errorf("%s imports %s: server knows nothing of the CLI", p, dep)
			case dep == "server" && slices.Contains(engineLayers, p):
				t.Errorf("%s imports server: the engine's packages sit below the engine", p)
			case slices.Index(engineLayers, dep) > slices.Index(engineLayers, p) && slices.Contains(engineLayers, p):
				t.Errorf("%s imports %s: the engine's packages are layered %v, bottom first", p, dep, engineLayers)
			case !below(p, "internal") && !below(p, "bench") && below(dep, "internal/memstore", "internal/seaweed"):
				t.Errorf("%s imports the test harness %s outside a test", p, dep)
			}
		}
	}
}
