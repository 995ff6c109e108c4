// Command weedbuild builds (or finds) the SeaweedFS binary the tests use,
// with its progress on the terminal: `make weed`, which `make test` runs
// first so that a cold build's minutes count against no test package's
// timeout. It prints the binary's path last, on stdout.
//
// The binary goes where the tests look for it (internal/seaweed.CacheDir);
// SLIVINGDOC_WEED names a prebuilt one instead, and then nothing is built.
package main

import (
	"fmt"
	"os"

	"github.com/slivingdoc/slivingdoc/internal/seaweed"
)

func main() {
	if len(os.Args) > 1 {
		fmt.Fprintln(os.Stderr, "usage: go run ./internal/seaweed/cmd/weedbuild (no arguments)")
		os.Exit(2)
	}
	bin, err := seaweed.Build(os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(bin)
}
