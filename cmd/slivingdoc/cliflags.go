package main

// Flag parsing and engine set-up shared by pull, commit, status and log.
//
// Flags may come before or after the positional path (`commit notes -m x`
// and `commit -m x notes` both work); `--` ends the flags.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/slivingdoc/slivingdoc/server"
	"github.com/slivingdoc/slivingdoc/server/diag"
)

// cliCommand is the parsed command line of one engine command.
type cliCommand struct {
	name     string
	fs       *flag.FlagSet
	settings *settings
	stdio    stdio
}

// newCLICommand makes the flag set; usage prints synopsis, the command's
// own flags, and the settings reference, without touching anything else.
func newCLICommand(name, synopsis, about string, s stdio) *cliCommand {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(s.err)
	c := &cliCommand{name: name, fs: fs, stdio: s}
	c.settings = addSettingsFlags(fs)
	fs.Usage = func() {
		w := s.out // -h output is the reference the user asked for
		fmt.Fprintf(w, "Usage: slivingdoc %s\n\n%s\n", synopsis, about)
		own := false
		fs.VisitAll(func(f *flag.Flag) {
			if isSettingFlag(f.Name) {
				return
			}
			if !own {
				fmt.Fprintf(w, "\nFlags:\n")
				own = true
			}
			arg, usage := flag.UnquoteUsage(f)
			fmt.Fprintf(w, "  -%s %s\n      %s\n", f.Name, arg, usage)
		})
		printSettingsPointer(w)
		fmt.Fprintf(w, "\nEnvironment: LOG_LEVEL (e.g. info,remote=debug), NO_COLOR.\nExit status: 0 OK, 1 an error result or conflict (report on stdout), 2 a usage or setup error.\n")
	}
	return c
}

func isSettingFlag(name string) bool {
	for _, st := range append(allSettings[:len(allSettings):len(allSettings)], retiredSettings...) {
		if st.flag == name {
			return true
		}
	}
	return false
}

// parse parses flags interspersed with positionals and returns the
// positionals; done is true when the caller should exit with code.
func (c *cliCommand) parse(args []string, maxPositional int) (pos []string, code int, done bool) {
	// The flag package prints the usage on -h and on a bad flag alike; the
	// reference belongs on stdout for -h only, so print it here.
	usage := c.fs.Usage
	c.fs.Usage = func() {}
	defer func() { c.fs.Usage = usage }()
	args = shortCounts(c.fs, args)
	for {
		if err := c.fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				usage()
				return nil, 0, true
			}
			// flag already printed the error on stderr.
			fmt.Fprintf(c.stdio.err, "Run 'slivingdoc %s -h' for the reference.\n", c.name)
			return nil, 2, true
		}
		rest := c.fs.Args()
		if len(rest) == 0 {
			break
		}
		if len(args) > 0 && len(rest) < len(args) && args[len(args)-len(rest)-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	if len(pos) > maxPositional {
		fmt.Fprintf(c.stdio.err, "slivingdoc %s: too many arguments: %s\n", c.name, strings.Join(pos[maxPositional:], " "))
		return nil, 2, true
	}
	return pos, 0, false
}

// resultView resolves --stat and --quiet (usage error: exit 2).
func (c *cliCommand) resultView(rf resultFlags) (resultView, int, bool) {
	v, err := rf.view(c.stdio.out)
	if err != nil {
		fmt.Fprintf(c.stdio.err, "slivingdoc %s: %s\n", c.name, err.(*usageError).msg)
		return 0, 2, true
	}
	return v, 0, false
}

// shortCounts rewrites git's short forms of a count, `-n1` and `-1`, into
// `-n 1` for a command that has an -n flag (Go's flag package reads `-n1`
// as a flag named "n1"). A token that is the value of the flag before it
// (`--commit-retries -1`) and everything after `--` is left alone.
func shortCounts(fs *flag.FlagSet, args []string) []string {
	if fs.Lookup("n") == nil {
		return args
	}
	out := make([]string, 0, len(args)+1)
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		if i > 0 && takesValue(fs, args[i-1]) {
			out = append(out, a)
			continue
		}
		if digits, ok := strings.CutPrefix(a, "-n"); ok && allDigits(digits) {
			out = append(out, "-n", digits)
		} else if digits, ok := strings.CutPrefix(a, "-"); ok && allDigits(digits) {
			out = append(out, "-n", digits)
		} else {
			out = append(out, a)
		}
	}
	return out
}

// takesValue reports whether token is a flag whose value is the next token.
func takesValue(fs *flag.FlagSet, token string) bool {
	name, ok := strings.CutPrefix(token, "-")
	if !ok || name == "" || name == "-" {
		return false
	}
	name = strings.TrimPrefix(name, "-")
	if strings.Contains(name, "=") {
		return false
	}
	f := fs.Lookup(name)
	if f == nil {
		return false
	}
	b, isBool := f.Value.(interface{ IsBoolFlag() bool })
	return !isBool || !b.IsBoolFlag()
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// config resolves the settings and opens the store (usage errors: exit 2).
func (c *cliCommand) config(ctx context.Context) (server.Config, int, bool) {
	c.settings.Logger = newLogger(c.stdio.err)
	cfg, err := c.settings.engineConfig(ctx)
	if err != nil {
		var ue *usageError
		if errors.As(err, &ue) {
			fmt.Fprintf(c.stdio.err, "slivingdoc %s: %s\n", c.name, ue.msg)
		} else {
			fmt.Fprintf(c.stdio.err, "slivingdoc %s: %s\n", c.name, scrubText(err.Error()))
		}
		return cfg, 2, true
	}
	return cfg, 0, false
}

// start starts the engine. When the user gave no --workspace-root, root
// (the notebook directory for pull/commit/status) becomes the workspace
// root; the default directory is the workspace root.
func (c *cliCommand) start(cfg *server.Config, root string) (*server.Engine, int, bool) {
	if cfg.WorkspaceRoot == "" {
		// At or below an existing notebook directory, that directory is
		// the root, so the engine runs on it (issue 14: never a copy).
		cfg.WorkspaceRoot = server.NotebookRoot(*cfg, root)
		if fi, err := os.Stat(root); err == nil && !fi.IsDir() {
			// A file is no notebook directory: let the engine say so
			// (INVALID_REQUEST / PATH_NOT_DIRECTORY), as over MCP.
			cfg.WorkspaceRoot = filepath.Dir(root)
		}
	}
	if cfg.DefaultDir == "" {
		// The commands pass the directory explicitly; the engine checks it
		// against the root, so a path outside is a PATH_OUTSIDE_ROOT report.
		cfg.DefaultDir = cfg.WorkspaceRoot
	}
	e, err := newEngine(*cfg)
	if err != nil {
		var de *diag.Error
		if errors.As(err, &de) {
			return nil, reportError(c.stdio.out, cfg.Logger, c.name, err, cfg.Writable, cfg.ReadOnly), true
		}
		fmt.Fprintf(c.stdio.err, "slivingdoc %s: %s\n", c.name, err)
		return nil, 2, true
	}
	return e, 0, false
}

// newEngine starts the engine of cfg (every command that runs one, serve
// too). The engine's records carry no module of their own; name it so that
// LOG_LEVEL=server=debug reaches them.
func newEngine(cfg server.Config) (*server.Engine, error) {
	cfg.Logger = cfg.Logger.With("module", "server")
	return server.New(cfg)
}

// notebookDir turns the optional path argument into an absolute directory
// (default: the working directory). With mayBeMissing (pull) a missing
// directory is fine: makeDir creates it once the settings are valid.
func (c *cliCommand) notebookDir(pos []string, mayBeMissing bool) (string, int, bool) {
	p := "."
	if len(pos) > 0 {
		p = pos[0]
	}
	if p == "" {
		fmt.Fprintf(c.stdio.err, "slivingdoc %s: empty path\n", c.name)
		return "", 2, true
	}
	dir, err := absDir(p)
	if err != nil {
		fmt.Fprintf(c.stdio.err, "slivingdoc %s: %v\n", c.name, err)
		return "", 2, true
	}
	// A path that is not a directory is the engine's to refuse
	// (INVALID_REQUEST / PATH_NOT_DIRECTORY, as over MCP).
	_, err = os.Stat(dir)
	switch {
	case err == nil:
	case errors.Is(err, os.ErrNotExist) && mayBeMissing:
	case errors.Is(err, os.ErrNotExist):
		// The raw "stat ...: no such file or directory" names a system
		// call; say what is missing and what makes it.
		fmt.Fprintf(c.stdio.err, "slivingdoc %s: %s does not exist; 'slivingdoc pull %s' makes it with the notebook's files\n", c.name, dir, p)
		return "", 2, true
	case err != nil:
		fmt.Fprintf(c.stdio.err, "slivingdoc %s: %v\n", c.name, err)
		return "", 2, true
	}
	return dir, 0, false
}

// makeRoot creates the workspace root of a pull when it is missing: the
// notebook directory itself when no --workspace-root was given. Nothing
// below the root is created here: the engine creates the notebook
// directory through the root once it has checked that it lies inside
// (lexically and through symlinks), so a refused path leaves nothing
// behind, outside the root least of all.
func (c *cliCommand) makeRoot(root, dir string) (int, bool) {
	if abs, err := absDir(root); err == nil {
		root = abs
	}
	if rel, err := filepath.Rel(root, dir); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return 0, false // outside: the engine reports PATH_OUTSIDE_ROOT
	}
	if _, err := os.Lstat(root); !errors.Is(err, os.ErrNotExist) {
		return 0, false
	}
	if err := os.MkdirAll(root, 0o777); err != nil {
		fmt.Fprintf(c.stdio.err, "slivingdoc %s: %v\n", c.name, err)
		return 2, true
	}
	return 0, false
}

// inDir is what pull, commit and status share once their flags are
// parsed: resolve the notebook directory (create: make it when missing,
// once the settings are known to be valid), the settings and the engine,
// then run op; a failure of op is printed as its report.
func (c *cliCommand) inDir(ctx context.Context, pos []string, create bool, op func(e *server.Engine, dir string) error) int {
	dir, code, done := c.notebookDir(pos, create)
	if done {
		return code
	}
	c.settings.Dir = dir // its remembered store, when none is given (store.go)
	cfg, code, done := c.config(ctx)
	if done {
		return code
	}
	if create {
		root := cfg.WorkspaceRoot
		if root == "" {
			root = server.NotebookRoot(cfg, dir) // dir itself unless inside a notebook
		}
		if code, done := c.makeRoot(root, dir); done {
			return code
		}
	}
	e, code, done := c.start(&cfg, dir)
	if done {
		return code
	}
	defer e.Close()
	if err := op(e, dir); err != nil {
		return c.fail(e, cfg, err)
	}
	return 0
}

// exitInterrupted is the shell's code for a process ended by SIGINT.
const exitInterrupted = 130

// fail prints a failed operation's report and returns its exit code.
func (c *cliCommand) fail(e *server.Engine, cfg server.Config, err error) int {
	if errors.Is(err, context.Canceled) {
		// Interrupted (Ctrl-C, SIGTERM): not a domain outcome. The engine's
		// recovery flag covers a rewrite it did not finish.
		fmt.Fprintf(c.stdio.err, "slivingdoc %s: interrupted\n", c.name)
		return exitInterrupted
	}
	w, r := cfg.Writable, cfg.ReadOnly
	if e != nil {
		w, r = e.PathSets()
	}
	return reportError(c.stdio.out, cfg.Logger, c.name, err, w, r)
}
