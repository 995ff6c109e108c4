package main

// The one rule for help and usage errors, for every command and for bare
// `slivingdoc` alike (Go's flag convention): help asked for (-h, --help,
// `help CMD`) goes to stdout with exit 0; a usage error goes to stderr with
// exit 2. `help CMD` is `CMD -h`: the command prints its own page, so the
// two cannot differ. The ~20 store and engine flags every command shares
// are on one page, `slivingdoc help store`; each command's page names them
// and points there.

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
)

// helpTopic returns the page of `slivingdoc help TOPIC` that is not a
// command (nil: none of that name). A switch, not a map: a package-level
// map is built before main in every process.
func helpTopic(name string) func(io.Writer) {
	switch name {
	case "store":
		return printStoreHelp
	}
	return nil
}

// runHelp is `slivingdoc help [TOPIC]`.
func runHelp(ctx context.Context, args []string, s stdio) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		usage(s.out)
		return 0
	}
	if len(args) > 1 {
		fmt.Fprintf(s.err, "slivingdoc help: one topic at a time, got %s\n", strings.Join(args, " "))
		return 2
	}
	if c, ok := lookup(args[0]); ok {
		return c.run(ctx, []string{"-h"}, s)
	}
	if page := helpTopic(args[0]); page != nil {
		page(s.out)
		return 0
	}
	fmt.Fprintf(s.err, "slivingdoc help: no command or topic %q\n\n", args[0])
	usage(s.err)
	return 2
}

// printStoreHelp is `slivingdoc help store`: every shared flag with its
// environment variable and default (docs/cli.md has the same table).
func printStoreHelp(w io.Writer) {
	fmt.Fprintf(w, "Usage: slivingdoc <command> [store and engine flags] ...\n\n"+
		"Every command that opens the notebook (all but merge-file, version, completion)\n"+
		"takes these flags. A flag overrides its environment variable, which overrides\n"+
		"the default.\n")
	printSettingsUsage(w)
}

// printSettingsPointer is what a command's -h page says of the shared
// flags: their names, and where they are explained.
func printSettingsPointer(w io.Writer) {
	fmt.Fprintf(w, "\nStore and engine flags, shared by every command (explained by 'slivingdoc help store'):\n")
	line := " "
	for _, st := range allSettings {
		name := " --" + st.flag
		if len(line)+len(name) > 78 {
			fmt.Fprintln(w, line)
			line = " "
		}
		line += name
	}
	fmt.Fprintln(w, line)
}

// commandNames returns the registered commands, sorted.
func commandNames() []string {
	names := make([]string, 0, commands.n)
	for _, c := range commands.list[:commands.n] {
		names = append(names, c.name)
	}
	sort.Strings(names)
	return names
}
