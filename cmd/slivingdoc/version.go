package main

import (
	"context"
	"flag"
	"fmt"
	"regexp"
	"runtime/debug"
	"strings"

	"github.com/slivingdoc/slivingdoc/internal/noinit"
)

func init() {
	register(command{name: "version", summary: "print the version", run: runVersion, oneShot: true, ownSignals: true})
}

// appVersion is the version reported (resolveVersion), worked out on first
// use: only version, the usage text and serve need it, and every other CLI
// process would pay for the build-info parsing and the two regular
// expressions at start-up (0.3 ms).
func appVersion() string {
	return appVersionOnce.Get(func() string { return resolveVersion(version, debug.ReadBuildInfo) })
}

var appVersionOnce noinit.Lazy[string]

// devVersion is the version of a build that knows nothing better: a semantic
// version that sorts below every release, as MCP clients and registries
// expect one.
const devVersion = "0.0.0-dev"

// semverRE is semver.org 2.0.0 without a leading "v" (the Makefile's
// SEMVER_RE).
func semverRE() *regexp.Regexp { return semverOnce.Get(compileSemver) }

var semverOnce noinit.Lazy[*regexp.Regexp]

func compileSemver() *regexp.Regexp {
	return regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)` +
		`(-(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)(\.(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*))*)?` +
		`(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)
}

// pseudoRE matches the suffix of a Go pseudo-version (v0.0.0-20261130150237-803911515041).
func pseudoRE() *regexp.Regexp {
	return pseudoOnce.Get(func() *regexp.Regexp { return regexp.MustCompile(`(^|[-.])[0-9]{14}-[0-9a-f]{12}(\+dirty)?$`) })
}

var pseudoOnce noinit.Lazy[*regexp.Regexp]

// resolveVersion is what `slivingdoc version` and the MCP serverInfo report,
// always a semantic version:
//   - a release stamp (-ldflags -X main.version=1.2.3) wins;
//   - a binary built by `go install module@v1.2.3` reports 1.2.3;
//   - a build from a checkout reports 0.0.0-dev+<12-hex revision>, with
//     ".dirty" when the tree had uncommitted changes (Go's VCS stamping;
//     the pseudo-version Go derives from it is not a version anyone chose);
//   - anything else (no VCS information, -buildvcs=false) 0.0.0-dev.
func resolveVersion(stamped string, buildInfo func() (*debug.BuildInfo, bool)) string {
	if stamped != "" && stamped != "dev" {
		return stamped
	}
	info, ok := buildInfo()
	if !ok {
		return devVersion
	}
	var rev string
	dirty := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	v := strings.TrimPrefix(info.Main.Version, "v")
	if v != "" && v != "(devel)" && !pseudoRE().MatchString(v) && semverRE().MatchString(v) {
		return v
	}
	if rev == "" {
		if v != "" && v != "(devel)" && semverRE().MatchString(v) {
			return v // go install module@<commit>: its pseudo-version names the commit
		}
		return devVersion
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	out := devVersion + "+" + rev
	if dirty {
		out += ".dirty"
	}
	return out
}

func runVersion(_ context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(s.err)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			// Help on stdout, as for every command (help.go).
			fmt.Fprintf(s.out, "Usage: slivingdoc version (or slivingdoc --version)\n\nPrints the version (a semantic version).\n")
			return 0
		}
		fmt.Fprintf(s.err, "Run 'slivingdoc version -h' for the reference.\n")
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(s.err, "slivingdoc version: too many arguments: %s\n", strings.Join(fs.Args(), " "))
		return 2
	}
	fmt.Fprintf(s.out, "slivingdoc %s\n", appVersion())
	return 0
}
