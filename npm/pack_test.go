package npm_test

// `make npm-pack` packs only what SHA256SUMS vouches for: a binary that does
// not match its entry, or a platform the sums do not list, stops it before
// any tarball is written.

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func TestNpmPackRefusesUnvouchedBinaries(t *testing.T) {
	needNode(t)
	const version = "0.0.0-pack"
	binary := []byte("not really a program\n")
	name := "slivingdoc-v" + version + "-linux-amd64"
	cases := map[string]struct {
		sums      string
		platforms string
	}{
		"altered after the sums were made": {fmt.Sprintf("%x  %s\n", sha256.Sum256([]byte("the published bytes\n")), name), "linux/amd64"},
		"platform missing from the sums":   {fmt.Sprintf("%x  %s\n", sha256.Sum256(binary), name), "linux/amd64 linux/arm64"},
		"malformed sums":                   {fmt.Sprintf("%x %s\n", sha256.Sum256(binary), name), "linux/amd64"},
		"platform not in the matrix":       {fmt.Sprintf("%x  %s\n", sha256.Sum256(binary), name), "linux/amd64 plan9/amd64"},
	}
	for what, c := range cases {
		t.Run(what, func(t *testing.T) {
			dist := t.TempDir()
			if err := os.WriteFile(filepath.Join(dist, name), binary, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dist, "SHA256SUMS"), []byte(c.sums), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := makeTarget("npm-pack", "VERSION="+version, "DIST="+dist, "PLATFORMS="+c.platforms)
			if err == nil {
				t.Fatalf("make npm-pack succeeded:\n%s", out)
			}
			tarballs, _ := filepath.Glob(filepath.Join(dist, "npm", "*.tgz"))
			if len(tarballs) != 0 {
				t.Errorf("refused pack left tarballs %v", tarballs)
			}
		})
	}
}
