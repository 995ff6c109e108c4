package main

import (
	"context"
	"flag"
	"fmt"
	"runtime/debug"
	"strings"
)

func init() {
	register(command{name: "version", summary: "print the version", run: runVersion})
	version = resolveVersion(version, debug.ReadBuildInfo)
}

// resolveVersion keeps a stamped release version; an unstamped binary built
// by `go install module@vX.Y.Z` reports the module version instead of "dev".
func resolveVersion(stamped string, buildInfo func() (*debug.BuildInfo, bool)) string {
	if stamped != "dev" {
		return stamped
	}
	info, ok := buildInfo()
	if !ok || info.Main.Version == "" || info.Main.Version == "(devel)" {
		return stamped
	}
	return strings.TrimPrefix(info.Main.Version, "v")
}

func runVersion(_ context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(s.err)
	fs.Usage = func() { fmt.Fprintf(s.err, "Usage: slivingdoc version\n\nPrints the release version.\n") }
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	fmt.Fprintf(s.out, "slivingdoc %s\n", version)
	return 0
}
