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
	"runtime"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/interrupt"
)

// version is stamped by the release build (-ldflags "-X main.version=..."); appVersion (version.go) is what is reported: the stamp, or unstamped what resolveVersion derives from the build info.
var version = ""

// command is one subcommand. run returns the process exit code.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdio stdio) int
	// oneShot: a command that does one operation and exits; main starts it
	// with the collector off until the process holds oneShotMemory
	// (collectLate).
	oneShot bool
	// longLived: a command that serves many operations (serve); main
	// keeps its collections serveHeapFloor apart at least (collectAbove).
	longLived bool
	// ownSignals: a command with nothing to finish when interrupted (it
	// changes neither L nor the store: a cache it writes is whole or
	// absent after any crash), or that installs the SIGINT and SIGTERM
	// handler itself where it needs one (merge-file before it reads an
	// input that is not a regular file, log --watch). main then starts it
	// without the handler: installing one costs every process the
	// runtime's signal goroutines and three or four threads, 7–10% of the
	// CPU of `version`, `merge-file` or a no-op `status`. Without it a
	// signal ends the process at once, which is all such a command needs.
	ownSignals bool
	// armedSignals: a command that rewrites L (pull, commit, restore,
	// revert). main gives it a context that the handler cancels once
	// armed (armedContext): the engine arms it just before it rewrites L
	// (internal/interrupt), so an interrupt lets the rewrite finish and L
	// is never left half rewritten, while a call that rewrites nothing (a
	// no-op pull or commit) never installs the handler. Until then a
	// signal ends the process as a crash would, which the next call
	// settles.
	armedSignals bool
}

// stdio is the command's standard streams, injectable for tests.
type stdio struct {
	in       io.Reader
	out, err io.Writer
}

// commands holds the registered commands in a fixed array: registration
// runs at package init in every process, and a map of this many commands
// would allocate 2.5–5 KB before main (TestStartupOurPackagesDoNoWorkAtInit).
var commands struct {
	list [maxCommands]command
	n    int
}

// maxCommands bounds the command table; register panics beyond it, at
// init, so a build with one command too many fails its first run.
const maxCommands = 32

func register(c command) {
	if commands.n == maxCommands {
		panic("slivingdoc: more than maxCommands commands; raise maxCommands")
	}
	commands.list[commands.n] = c
	commands.n++
}

// lookup returns the command called name.
func lookup(name string) (command, bool) {
	for _, c := range commands.list[:commands.n] {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

func init() {
	register(command{name: "help", summary: "show the help of a command, or of the store flags (help store)", run: runHelp, ownSignals: true})
}

func main() {
	var c command
	if len(os.Args) > 1 {
		c, _ = lookup(os.Args[1])
		if c.oneShot {
			collectLate(oneShotMemory)
		}
		if c.longLived {
			collectAbove(serveHeapFloor)
		}
	}
	ctx, stop := context.Background(), context.CancelFunc(func() {})
	switch {
	case c.armedSignals:
		ctx, stop = armedContext(context.Background())
	case !c.ownSignals:
		ctx, stop = notifyContext(context.Background())
	}
	code := run(ctx, os.Args[1:], stdio{os.Stdin, os.Stdout, os.Stderr})
	stop()
	flushLogs(2 * time.Second)
	os.Exit(code)
}

// notifyContext is ctx, cancelled by the first SIGINT or SIGTERM.
func notifyContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}

// armedContext is ctx, cancelled by the first SIGINT or SIGTERM after
// interrupt.Arm was called on it (or on a context derived from it); the
// handler is installed then, not before.
func armedContext(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	var mu sync.Mutex
	unarm := func() {}
	ctx = interrupt.WithArming(ctx, func() {
		signals, stop := notifyContext(context.Background())
		stopAfter := context.AfterFunc(signals, cancel)
		mu.Lock()
		unarm = func() { stopAfter(); stop() }
		mu.Unlock()
	})
	return ctx, func() {
		mu.Lock()
		unarm()
		mu.Unlock()
		cancel()
	}
}

func run(ctx context.Context, args []string, s stdio) int {
	if len(args) == 0 {
		// No command is a usage error, like a bad flag: stderr, exit 2.
		usage(s.err)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help":
		args = append([]string{"help"}, args[1:]...)
	case "-version", "--version":
		args = append([]string{"version"}, args[1:]...)
	}
	c, ok := lookup(args[0])
	if !ok {
		fmt.Fprintf(s.err, "slivingdoc: unknown command %q\n\n", args[0])
		usage(s.err)
		return 2
	}
	return c.run(ctx, args[1:], s)
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "slivingdoc %s: a shared notebook for agents and people\n\nUsage: slivingdoc <command> [flags]\n\nCommands:\n", appVersion())
	for _, n := range commandNames() {
		c, _ := lookup(n)
		fmt.Fprintf(w, "  %-11s %s\n", n, c.summary)
	}
	fmt.Fprintf(w, "\nRun 'slivingdoc help <command>' (or 'slivingdoc <command> -h') for a command's flags,\n"+
		"'slivingdoc help store' for the store and engine flags every command shares.\n"+
		"Reference: docs/cli.md.\n")
}

// oneShotMemory bounds the Go memory of a oneShot command run without the
// collector. A commit allocates 3.4 MiB in all in a notebook of 10 files,
// 5 MiB of 1,000 and 13 MiB of 10,000 (2.7 MiB of it is package
// initialisation), and merge-file about 2.5 times its input (a merge of
// three 5 MB notes stays below it), so only an unusually large operation
// reaches it.
const oneShotMemory = 64 << 20

// collectLate turns the collector off until the process's Go memory
// reaches bound, then gives it back its settings (GOGC, GOMEMLIMIT): a
// command that exits after one operation otherwise spends a quarter of its
// CPU on two or three collections of a 4 MiB heap (their mark workers,
// stop-the-world phases and the globals of a large binary), reclaiming
// memory the exit reclaims anyway. The collection the bound forces frees
// a sentinel object, whose cleanup restores the settings. GOGC=off given by
// the user stays off; a GOMEMLIMIT below bound is the bound.
func collectLate(bound int64) {
	percent := debug.SetGCPercent(-1)
	if percent < 0 {
		return
	}
	limit := debug.SetMemoryLimit(-1) // -1 reads the limit
	debug.SetMemoryLimit(min(limit, bound))
	runtime.AddCleanup(new(gcSentinel), func(struct{}) {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	}, struct{}{})
}

// gcSentinel is collectLate's object that only a collection frees: large
// enough to stay out of the tiny allocator, whose shared blocks may outlive
// their objects.
type gcSentinel [64]byte
