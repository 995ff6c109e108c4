package npm_test

// `make release` refuses a VERSION that is not semver before building
// anything, and its default PLATFORMS is exactly the launcher's matrix.

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestReleaseRefusesNonSemverVersion(t *testing.T) {
	for _, v := range []string{"dev", "1.2", "v1.2.3", "01.2.3", "1.2.3-", "1.2.3 ", ""} {
		t.Run(v, func(t *testing.T) {
			dist := t.TempDir()
			for _, target := range []string{"release", "npm-pack"} {
				out, err := makeTarget(target, "VERSION="+v, "DIST="+dist, "VERSION_FILES=")
				var exit *exec.ExitError
				if !errors.As(err, &exit) {
					t.Fatalf("make %s VERSION=%q: %v, want a refusal\n%s", target, v, err, out)
				}
				if !strings.Contains(out, "not a semantic version") {
					t.Errorf("make %s VERSION=%q said %q", target, v, out)
				}
			}
			if left, _ := os.ReadDir(dist); len(left) != 0 {
				t.Errorf("a refused release left %v", left)
			}
		})
	}
}

func TestDefaultPlatformsAreTheLauncherMatrix(t *testing.T) {
	needNode(t)
	out, err := makeTarget("-s", "--eval", "print-platforms: ; @echo $(PLATFORMS)", "print-platforms")
	if err != nil {
		t.Fatalf("make: %v\n%s", err, out)
	}
	script := `console.log(require(process.argv[1]).platforms.map((p) => p.go).join(" "))`
	matrix, err := exec.Command("node", "-e", script, filepath.Join(repoRoot, "npm", "slivingdoc", "lib", "platforms.js")).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Fields(out), strings.Fields(string(matrix)); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Makefile PLATFORMS %v, launcher matrix %v", got, want)
	}
	for _, p := range strings.Fields(string(matrix)) {
		asset := assetOf(p)
		if _, ok := targets[asset]; !ok {
			t.Errorf("platform %s (asset %s) has no expected target in binaries_test.go", p, asset)
		}
	}
}
