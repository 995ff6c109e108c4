package main

import (
	"bufio"
	"debug/buildinfo"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// initRecord is one line of the Go runtime's GODEBUG=inittrace=1 report:
// the package whose initialisation ran, and what it allocated.
type initRecord struct {
	pkg    string
	bytes  int
	allocs int
}

// parseInitTrace reads the runtime's report lines ("init PKG @T ms, C ms
// clock, B bytes, A allocs") from stderr; other lines are skipped.
func parseInitTrace(t *testing.T, stderr string) []initRecord {
	t.Helper()
	var out []initRecord
	sc := bufio.NewScanner(strings.NewReader(stderr))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 11 || f[0] != "init" || f[8] != "bytes," || f[10] != "allocs" {
			continue
		}
		b, err1 := strconv.Atoi(f[7])
		a, err2 := strconv.Atoi(f[9])
		if err1 != nil || err2 != nil {
			t.Fatalf("unreadable init trace line %q", sc.Text())
		}
		out = append(out, initRecord{pkg: f[1], bytes: b, allocs: a})
	}
	return out
}

// Every process pays for every package's initialisation, whatever the
// command; ours do no work there. version and help (the cheapest commands)
// run with the runtime's init trace, and none of our packages may allocate
// (allocation counts, not durations: they are the same on a loaded
// machine). The dependencies' figures are logged for the reader (go test
// -v): what remains is theirs.
func TestStartupOurPackagesDoNoWorkAtInit(t *testing.T) {
	bin := cliBinary(t)
	for _, args := range [][]string{{"version"}, {"--help"}, {"status", "-h"}} {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr.String())
		}
		recs := parseInitTrace(t, stderr.String())
		if len(recs) == 0 {
			t.Fatalf("%v: no init trace on stderr:\n%s", args, stderr.String())
		}
		var ours, theirs int
		sawMain := false
		for _, r := range recs {
			mine := r.pkg == "main" || strings.HasPrefix(r.pkg, "github.com/slivingdoc/slivingdoc/")
			sawMain = sawMain || r.pkg == "main"
			if !mine {
				theirs += r.bytes
				continue
			}
			ours += r.bytes
			if r.allocs > 0 {
				t.Errorf("%v: package %s allocates %d bytes (%d allocations) at init: make its package-level values static or lazy (internal/noinit)",
					args, r.pkg, r.bytes, r.allocs)
			}
		}
		if !sawMain {
			t.Errorf("%v: the init trace has no line for main; the format may have changed:\n%s", args, stderr.String())
		}
		t.Logf("%v: package init allocates %d bytes in our packages, %d in dependencies", args, ours, theirs)
	}
}

// The cheapest commands pay for nothing they do not use: version, help
// and a completion script open no store, create no private root, cache or
// state directory, whatever the settings name. Every place the binary
// could write is under base, which stays empty.
func TestStartupCheapCommandsTouchNothing(t *testing.T) {
	bin := cliBinary(t)
	base := t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(k, "SLIVINGDOC_") && !strings.HasPrefix(k, "XDG_") && k != "HOME" {
			env = append(env, kv)
		}
	}
	env = append(env,
		"HOME="+filepath.Join(base, "home"),
		"XDG_CACHE_HOME="+filepath.Join(base, "cache"),
		"XDG_STATE_HOME="+filepath.Join(base, "state"),
		"XDG_DATA_HOME="+filepath.Join(base, "data"),
		"XDG_CONFIG_HOME="+filepath.Join(base, "config"),
		"SLIVINGDOC_STORE=file://"+filepath.ToSlash(filepath.Join(base, "store")),
		"SLIVINGDOC_PRIVATE_ROOT="+filepath.Join(base, "private"),
		"SLIVINGDOC_WORKSPACE_ROOT="+filepath.Join(base, "workspace"),
	)
	for _, args := range [][]string{{"version"}, {"--version"}, {"--help"}, {"help"}, {"help", "store"}, {"completion", "bash"}} {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		cmd.Dir = base
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		if entries, err := os.ReadDir(base); err != nil || len(entries) != 0 {
			t.Fatalf("%v created %v (%v)", args, entries, err)
		}
	}
}

// notLinked are modules whose package initialisation costs every process
// more than all of ours together, for work only serve could use: an MCP
// server library and the JSON-schema packages they bring (mcp-go's server
// package compiles JSON meta-schemas at init). serve speaks MCP with the
// adapter's own protocol (server/mcpserver), so none of them may come back
// into the binary by an import; tests may still use them as clients.
var notLinked = []string{
	"github.com/mark3labs/mcp-go",
	"github.com/modelcontextprotocol/go-sdk",
	"github.com/santhosh-tekuri/jsonschema",
	"github.com/google/jsonschema-go",
}

// The binary's own build information lists every module it links.
func TestStartupLinksNoMCPLibraryNorSchemaCompiler(t *testing.T) {
	info, err := buildinfo.ReadFile(cliBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Deps) == 0 {
		t.Fatal("the build information lists no modules; the check would prove nothing")
	}
	for _, m := range info.Deps {
		for _, bad := range notLinked {
			if m.Path == bad || strings.HasPrefix(m.Path, bad+"/") {
				t.Errorf("slivingdoc links %s %s, whose package init every command would pay; serve needs none of it", m.Path, m.Version)
			}
		}
	}
}

// notLinkedPackages are packages of linked modules that no command may
// link: golang.org/x/text/cases (and the language tables it brings) is
// initialised in every process at start-up; names are case-folded by
// internal/casefold instead.
var notLinkedPackages = []string{
	"golang.org/x/text/cases.",
	"golang.org/x/text/language.",
}

// A module's packages are told apart by the symbols the binary holds.
func TestStartupLinksNoCaseFoldingTables(t *testing.T) {
	f, err := elf.Open(cliBinary(t))
	if err != nil {
		t.Skipf("not an ELF binary: %v", err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil || len(syms) == 0 {
		t.Fatalf("the binary has no symbol table (%v); the check would prove nothing", err)
	}
	norm := false
	for _, s := range syms {
		norm = norm || strings.HasPrefix(s.Name, "golang.org/x/text/unicode/norm.")
		for _, bad := range notLinkedPackages {
			if strings.HasPrefix(s.Name, bad) {
				t.Fatalf("slivingdoc links %s (symbol %s), whose package init every command would pay", strings.TrimSuffix(bad, "."), s.Name)
			}
		}
	}
	if !norm {
		t.Fatal("no symbol of golang.org/x/text/unicode/norm, which names are normalised with; the symbol names may have changed form and the check would prove nothing")
	}
}
