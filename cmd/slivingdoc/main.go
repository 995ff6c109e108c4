// Command slivingdoc is the shared notebook for agents and people: an MCP
// server over stdio (serve) and the same operations on the command line.
//
// Each command lives in its own file and registers itself in commands; main
// only dispatches. Exit codes: 0 success, 1 a domain outcome the caller acts
// on (an error result, merge conflicts), 2 a usage or setup error.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"sort"
	"syscall"
	"time"
)

// version is stamped by the release build (-ldflags "-X main.version=..."); unstamped, resolveVersion (version.go) derives it from the build info.
var version = ""

// command is one subcommand. run returns the process exit code.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdio stdio) int
	// noGC: a one-shot command whose garbage dies with the process; main
	// starts it with the collector off (the command may turn it back on).
	noGC bool
}

// stdio is the command's standard streams, injectable for tests.
type stdio struct {
	in       io.Reader
	out, err io.Writer
}

var commands = map[string]command{}

func register(c command) { commands[c.name] = c }

func main() {
	if len(os.Args) > 1 && commands[os.Args[1]].noGC {
		debug.SetGCPercent(-1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], stdio{os.Stdin, os.Stdout, os.Stderr})
	stop()
	flushLogs(2 * time.Second)
	os.Exit(code)
}

func run(ctx context.Context, args []string, s stdio) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(s.out)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(s.err, "slivingdoc: unknown command %q\n\n", args[0])
		usage(s.err)
		return 2
	}
	return c.run(ctx, args[1:], s)
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "slivingdoc %s: a shared notebook for agents and people\n\nUsage: slivingdoc <command> [flags]\n\nCommands:\n", version)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-11s %s\n", n, commands[n].summary)
	}
	fmt.Fprintf(w, "\nRun 'slivingdoc <command> -h' for a command's flags.\n")
}
