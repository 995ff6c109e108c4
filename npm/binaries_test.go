package npm_test

// Every release binary is what its name says: the right executable format
// and CPU, built without cgo from trimmed paths, free of any dynamic loader
// or non-system library, with the version stamped in; the ones this machine
// can run (natively or under qemu-user) print that version. SHA256SUMS lists
// exactly those files, sorted, in `sha256sum -c` format.

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// target is what a release file name promises.
type target struct{ goos, goarch, goarm string }

// targets maps the os-arch part of a release file name to its build target.
var targets = map[string]target{
	"linux-amd64":   {"linux", "amd64", ""},
	"linux-arm64":   {"linux", "arm64", ""},
	"linux-armv7":   {"linux", "arm", "7"},
	"darwin-amd64":  {"darwin", "amd64", ""},
	"darwin-arm64":  {"darwin", "arm64", ""},
	"windows-amd64": {"windows", "amd64", ""},
}

// qemuUser names the qemu-user emulator binaries by GOARCH.
var qemuUser = map[string][]string{
	"arm64": {"qemu-aarch64", "qemu-aarch64-static"},
	"arm":   {"qemu-arm", "qemu-arm-static"},
	"amd64": {"qemu-x86_64", "qemu-x86_64-static"},
}

func TestReleaseBinaries(t *testing.T) {
	r := theRelease(t)
	sums := readSHA256SUMS(t, filepath.Join(r.dir, "SHA256SUMS"))
	if len(sums) == 0 {
		t.Fatal("SHA256SUMS lists no binary")
	}
	prefix := "slivingdoc-v" + r.version + "-"
	built, _ := filepath.Glob(filepath.Join(r.dir, prefix+"*"))
	for i := range built {
		built[i] = filepath.Base(built[i])
	}
	if names := sortedKeys(sums); !slices.Equal(names, built) {
		t.Errorf("SHA256SUMS lists %v, the release directory holds %v", names, built)
	}
	for name, want := range sums {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(r.dir, name)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := sha256.Sum256(data); hex.EncodeToString(got[:]) != want {
				t.Errorf("SHA-256 %x, SHA256SUMS says %s", got, want)
			}
			rest, ok := strings.CutPrefix(name, prefix)
			tg, known := targets[strings.TrimSuffix(rest, ".exe")]
			if !ok || !known || strings.HasSuffix(rest, ".exe") != (tg.goos == "windows") {
				t.Fatalf("%s is not slivingdoc-v%s-<os>-<arch>[.exe] for a release target", name, r.version)
			}
			checkBuildInfo(t, path, tg)
			checkVersionStamp(t, data, r.version)
			for _, p := range executableProblems(path, tg) {
				t.Error(p)
			}
			runVersion(t, path, tg, r.version)
		})
	}
}

// readSHA256SUMS parses the file strictly: "<64 lowercase hex>  <name>\n"
// lines, sorted by name, nothing else.
func readSHA256SUMS(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) == 0 || data[len(data)-1] != '\n' || strings.Contains(string(data), "\r") {
		t.Fatalf("SHA256SUMS must be LF-terminated lines, got %q", data)
	}
	line := regexp.MustCompile(`^([0-9a-f]{64})  (\S+)$`)
	sums := map[string]string{}
	var names []string
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			t.Fatalf("SHA256SUMS line %q is not \"<sha256>  <name>\"", sc.Text())
		}
		sums[m[2]] = m[1]
		names = append(names, m[2])
	}
	if !slices.IsSorted(names) || len(names) != len(sums) {
		t.Errorf("SHA256SUMS names must be sorted and unique: %v", names)
	}
	return sums
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// checkBuildInfo reads what `go version -m` shows.
func checkBuildInfo(t *testing.T, path string, tg target) {
	t.Helper()
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		t.Fatalf("no Go build info: %v", err)
	}
	if info.Path != "github.com/slivingdoc/slivingdoc/cmd/slivingdoc" {
		t.Errorf("main package %q", info.Path)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	want := map[string]string{"GOOS": tg.goos, "GOARCH": tg.goarch, "CGO_ENABLED": "0", "-trimpath": "true"}
	if tg.goarm != "" {
		want["GOARM"] = tg.goarm
	}
	for k, v := range want {
		if settings[k] != v {
			t.Errorf("build setting %s=%q, want %q", k, settings[k], v)
		}
	}
}

// checkVersionStamp looks for the -X main.version string; -trimpath keeps
// -ldflags out of the build info, and runVersion proves it where it can run.
func checkVersionStamp(t *testing.T, data []byte, version string) {
	t.Helper()
	if !bytes.Contains(data, []byte(version)) {
		t.Errorf("version %q is not stamped into the binary", version)
	}
}

// executableProblems checks the format and CPU, and that nothing is loaded
// at start but the operating system's own libraries (macOS system libraries
// and frameworks, which Go always links there; kernel32 on Windows; nothing
// at all on Linux: no interpreter, no dynamic section).
func executableProblems(path string, tg target) []string {
	var problems, libs []string
	switch tg.goos {
	case "linux":
		f, err := elf.Open(path)
		if err != nil {
			return []string{fmt.Sprintf("not ELF: %v", err)}
		}
		defer f.Close()
		machine := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64, "arm": elf.EM_ARM}[tg.goarch]
		if f.Machine != machine || f.Type != elf.ET_EXEC {
			problems = append(problems, fmt.Sprintf("ELF %v %v, want %v executable", f.Type, f.Machine, machine))
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
				problems = append(problems, fmt.Sprintf("has %v: dynamically linked", p.Type))
			}
		}
		libs, _ = f.ImportedLibraries()
	case "darwin":
		f, err := macho.Open(path)
		if err != nil {
			return []string{fmt.Sprintf("not Mach-O: %v", err)}
		}
		defer f.Close()
		cpu := map[string]macho.Cpu{"amd64": macho.CpuAmd64, "arm64": macho.CpuArm64}[tg.goarch]
		if f.Cpu != cpu || f.Type != macho.TypeExec {
			problems = append(problems, fmt.Sprintf("Mach-O %v %v, want %v executable", f.Type, f.Cpu, cpu))
		}
		all, _ := f.ImportedLibraries()
		for _, l := range all {
			// libSystem, libresolv, CoreFoundation and Security (for the
			// system's certificate roots) ship with every macOS.
			if !strings.HasPrefix(l, "/usr/lib/") && !strings.HasPrefix(l, "/System/Library/Frameworks/") {
				libs = append(libs, l)
			}
		}
	case "windows":
		f, err := pe.Open(path)
		if err != nil {
			return []string{fmt.Sprintf("not PE: %v", err)}
		}
		defer f.Close()
		if f.Machine != pe.IMAGE_FILE_MACHINE_AMD64 {
			problems = append(problems, fmt.Sprintf("PE machine %#x, want AMD64", f.Machine))
		}
		all, _ := f.ImportedLibraries()
		for _, l := range all {
			if strings.ToLower(l) != "kernel32.dll" {
				libs = append(libs, l)
			}
		}
	}
	if len(libs) > 0 {
		problems = append(problems, fmt.Sprintf("needs shared libraries %v", libs))
	}
	return problems
}

// The check above is what vouches for every release binary; show it can fail.
func TestExecutableCheckCatchesDynamicLinking(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("uses the system's own dynamically linked ELF programs")
	}
	tg := target{"linux", runtime.GOARCH, ""}
	ls, err := exec.LookPath("ls")
	if err != nil {
		t.Skip(err)
	}
	if problems := executableProblems(ls, tg); !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, "PT_INTERP") }) {
		t.Errorf("%s passes as static: %v", ls, problems)
	}
	other := target{"linux", map[string]string{"amd64": "arm64"}[runtime.GOARCH], ""}
	if other.goarch == "" {
		other.goarch = "amd64"
	}
	if problems := executableProblems(ls, other); len(problems) == 0 {
		t.Errorf("%s passes as linux/%s", ls, other.goarch)
	}
}

// runVersion runs `version` where this machine can: natively, or a Linux
// binary under qemu-user when it is installed (it is not required).
func runVersion(t *testing.T, path string, tg target, version string) {
	t.Helper()
	var argv []string
	switch {
	case tg.goos == runtime.GOOS && tg.goarch == runtime.GOARCH:
		argv = []string{path, "version"}
	case tg.goos == "linux" && runtime.GOOS == "linux":
		for _, q := range qemuUser[tg.goarch] {
			if qemu, err := exec.LookPath(q); err == nil {
				argv = []string{qemu, path, "version"}
				break
			}
		}
	}
	if argv == nil {
		t.Logf("not run: no way to execute %s/%s here (checked by its headers only)", tg.goos, tg.goarch)
		return
	}
	out, err := exec.Command(argv[0], argv[1:]...).Output()
	if err != nil {
		t.Fatalf("%v: %v", argv, err)
	}
	t.Logf("ran %v", argv)
	if want := "slivingdoc " + version + "\n"; string(out) != want {
		t.Errorf("%v printed %q, want %q", argv, out, want)
	}
}
