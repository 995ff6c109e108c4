package main

import (
	"context"
	"flag"
	"fmt"
)

func init() {
	register(command{name: "version", summary: "print the version", run: runVersion})
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
