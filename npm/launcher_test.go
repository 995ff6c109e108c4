package npm_test

// Installed from the packed tarballs with the registry unreachable,
// `npx slivingdoc` runs the release binary; a binary that is not the
// published one, or a missing platform package, is refused with a clear
// message on stderr, nothing on stdout, and exit status 2, before anything
// of the binary runs.

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// installedBinary is the platform package's binary inside project.
func installedBinary(t *testing.T, project string) string {
	t.Helper()
	name := map[string]string{"amd64": "x64", "arm64": "arm64", "arm": "arm"}[runtime.GOARCH]
	goos := runtime.GOOS
	exe := ""
	if goos == "windows" {
		goos, exe = "win32", ".exe"
	}
	path := filepath.Join(project, "node_modules", "@slivingdoc", goos+"-"+name, "bin", "slivingdoc"+exe)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("platform package binary: %v", err)
	}
	return path
}

func TestNpxRunsTheReleaseBinary(t *testing.T) {
	project := installProject(t, hostTarballs(t))

	res := runIn(t, project, "", "npx", "slivingdoc", "version")
	if res.code != 0 || res.stdout != "slivingdoc "+testVersion+"\n" {
		t.Fatalf("npx slivingdoc version: exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
	}

	// The binary's own exit status comes through: 2 for an unknown command.
	res = runIn(t, project, "", "npx", "slivingdoc", "no-such-command")
	if res.code != 2 || res.stdout != "" || launcherToken(res.stderr) != "" {
		t.Errorf("unknown command: exit %d, stdout %q, stderr %q; want the binary's usage error", res.code, res.stdout, res.stderr)
	}
}

func TestLauncherRefusesAlteredBinary(t *testing.T) {
	project := installProject(t, hostTarballs(t))
	binary := installedBinary(t, project)
	original, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("one byte appended", func(t *testing.T) {
		if err := os.WriteFile(binary, append(original[:len(original):len(original)], 0), 0o755); err != nil {
			t.Fatal(err)
		}
		res := runIn(t, project, "", "npx", "slivingdoc", "version")
		if tok := launcherToken(res.stderr); res.code != 2 || res.stdout != "" || tok != "CHECKSUM_MISMATCH" {
			t.Errorf("exit %d, stdout %q, stderr %q; want CHECKSUM_MISMATCH, exit 2, no output", res.code, res.stdout, res.stderr)
		}
	})

	t.Run("replaced by another program", func(t *testing.T) {
		if runtime.GOOS == "windows" {
			t.Skip("the stand-in is a shell script")
		}
		marker := filepath.Join(t.TempDir(), "ran")
		if err := os.WriteFile(binary, []byte("#!/bin/sh\ntouch '"+marker+"'\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		res := runIn(t, project, "", "npx", "slivingdoc", "version")
		if tok := launcherToken(res.stderr); res.code != 2 || tok != "CHECKSUM_MISMATCH" {
			t.Errorf("exit %d, stderr %q; want CHECKSUM_MISMATCH, exit 2", res.code, res.stderr)
		}
		if _, err := os.Stat(marker); !os.IsNotExist(err) {
			t.Errorf("the unverified program ran (marker: %v)", err)
		}
	})

	t.Run("restored", func(t *testing.T) {
		if err := os.WriteFile(binary, original, 0o755); err != nil {
			t.Fatal(err)
		}
		if res := runIn(t, project, "", "npx", "slivingdoc", "version"); res.code != 0 {
			t.Errorf("the published bytes are refused: exit %d, stderr %q", res.code, res.stderr)
		}
	})
}

func TestLauncherReportsMissingPlatformPackage(t *testing.T) {
	project := installProject(t, hostTarballs(t))
	// What `npm install --omit=optional` or a foreign lockfile leaves behind.
	if err := os.RemoveAll(filepath.Dir(filepath.Dir(installedBinary(t, project)))); err != nil {
		t.Fatal(err)
	}
	res := runIn(t, project, "", "npx", "slivingdoc", "version")
	if tok := launcherToken(res.stderr); res.code != 2 || res.stdout != "" || tok != "PLATFORM_PACKAGE_MISSING" {
		t.Errorf("exit %d, stdout %q, stderr %q; want PLATFORM_PACKAGE_MISSING, exit 2, no output", res.code, res.stdout, res.stderr)
	}
}
