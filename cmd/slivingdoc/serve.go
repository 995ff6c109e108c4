package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/author"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/mcpserver"
)

func init() {
	register(command{name: "serve", summary: "run the MCP server (notes_pull, notes_commit) over stdio", run: runServe, longLived: true})
}

// runServe speaks MCP JSON-RPC on stdin/stdout until stdin closes. Stdout
// carries only protocol messages; logs go to stderr.
//
// Without --workspace-root the server uses the session directory of the
// host that started it (sessiondir.go), shared by every server process
// that host starts, as notebook directory and workspace root, so an agent
// simply omits path. With one, the root is the notebook directory and path
// may address directories below it.
func runServe(ctx context.Context, args []string, s stdio) int {
	c := newCLICommand("serve", "serve [flags]", "", s)
	af := addAuthorFlag(c.fs)
	c.fs.Usage = func() {
		w := s.out
		fmt.Fprintf(w, "Usage: slivingdoc serve [flags]\n\n"+
			"Runs the MCP server over stdio: exactly two tools, notes_pull and notes_commit.\n"+
			"Stdout carries only MCP JSON-RPC; logs go to stderr. Without --workspace-root the\n"+
			"server serves the session directory of the host that started it\n"+
			"(<tmp>/slivingdoc-<uid>-<host pid>-<key>/notebook, one per host process);\n"+
			"with one, that directory is the notebook directory and tool calls may pass a path\n"+
			"at or below it.\n"+
			"\nFlags:\n  -author name\n      %s\n", authorUsageText())
		printSettingsPointer(w)
		fmt.Fprintf(w, "\nEnvironment: LOG_LEVEL (e.g. info,mcp=debug), "+author.EnvVar+" (as --author).\n"+
			"Exit status: 0 when stdin closes or on SIGTERM, SIGHUP or SIGINT (calls in flight finish first),\n"+
			"1 the engine refused to start, 2 a usage or setup error.\n")
	}
	if _, code, done := c.parse(args, 0); done {
		return code
	}
	cfg, code, done := c.config(ctx)
	if done {
		return code
	}
	log := cfg.Logger.With("module", "cli")
	if cfg.WorkspaceRoot == "" {
		// The host's session directory, shared by every server process
		// the same host starts (sessiondir.go).
		dir, err := sessionDir(log)
		if err != nil {
			fmt.Fprintf(s.err, "slivingdoc serve: session directory: %v\n", err)
			return 2
		}
		cfg.WorkspaceRoot = dir
		log.Info("session directory", "dir", dir)
	}
	if cfg.DefaultDir == "" {
		cfg.DefaultDir = cfg.WorkspaceRoot
	}
	// A missing workspace root is created, as pull creates its directory: a
	// host's configuration names a directory that need not exist yet. What
	// cannot be made into a directory is one line on stderr, which hosts
	// show (a bare exit shows as "Connection closed"), naming the setting
	// rather than the engine's "a file or directory vanished".
	fi, err := os.Stat(cfg.WorkspaceRoot)
	if err != nil {
		if mkErr := os.MkdirAll(cfg.WorkspaceRoot, 0o777); mkErr != nil {
			fmt.Fprintf(s.err, "slivingdoc serve: the workspace root %s is not there and cannot be created: %s\n",
				safeText(cfg.WorkspaceRoot), scrubText(mkErr.Error()))
			return 2
		}
		log.Info("workspace root created", "dir", cfg.WorkspaceRoot)
		fi, err = os.Stat(cfg.WorkspaceRoot)
	}
	if err != nil || !fi.IsDir() {
		fmt.Fprintf(s.err, "slivingdoc serve: the workspace root %s is not a directory\n", safeText(cfg.WorkspaceRoot))
		return 2
	}

	cfg.LongLived = true // one process, many calls: keep what each call learned (server/dirstate)
	eng, err := newEngine(cfg)
	if err != nil {
		fmt.Fprintf(s.err, "slivingdoc serve: %s\n", scrubText(err.Error()))
		var de *diag.Error
		if errors.As(err, &de) {
			return 1
		}
		return 2
	}
	defer eng.Close()

	// A store without conditional writes would corrupt the notebook under
	// concurrency: that is a startup-only diagnostic, never a tool result.
	// Other probe failures (an unreachable store) are left to the calls,
	// which report them with a retry verdict. The engine caches the verdict
	// per store, so this costs requests only when it is stale.
	if err := eng.Probe(ctx); errors.Is(err, remote.ErrIncompatible) {
		log.Error("store probe", "err", err.Error()) // the logger scrubs
		fmt.Fprintf(s.err, "slivingdoc serve: INCOMPATIBLE_STORE: the store does not enforce the conditional writes "+
			"a shared notebook needs (If-None-Match/If-Match on PUT); use a store that does\n")
		return 1
	} else if err != nil {
		log.Warn("store probe failed; calls will report it", "err", scrubText(err.Error()))
	}

	redact := []string{cfg.PrivateRoot}
	for _, k := range credentialEnv { // the logger's list (logging.go)
		redact = append(redact, os.Getenv(k))
	}
	a, err := mcpserver.New(eng, mcpserver.Options{Version: appVersion(), Logger: cfg.Logger, Redact: redact, Scrubber: procScrub,
		Author: af.processClaim()})
	if err != nil {
		fmt.Fprintf(s.err, "slivingdoc serve: %s\n", scrubText(err.Error()))
		return 2
	}
	// SIGHUP (the host's terminal or session went away) ends the server
	// like end of input, as SIGTERM and SIGINT do (main). With SIGPIPE
	// notified, a write to a closed stdout or stderr fails with EPIPE
	// instead of killing the process mid-call: the server then stops serving,
	// the logger drops records.
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGHUP)
	defer stop()
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	defer signal.Stop(pipe)
	if err := a.Serve(ctx, s.in, s.out); err != nil {
		log.Error("serve ended", "err", scrubText(err.Error()))
		return 2
	}
	return 0
}
