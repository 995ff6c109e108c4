package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The session directory of `slivingdoc serve` without --workspace-root.
//
// It belongs to the host, not to one server process: a client of the
// stateless 2026-07-28 protocol may start a process to probe (discover, or
// initialize) and keep its instructions, then call the tools through
// another process, or start one process per request. All of them must name
// and use one directory that exists. So the directory is keyed by the host
// process that started the server: the nearest ancestor that is not a
// launcher in between (the npm launcher, npx/npm exec, a `sh -c`, `env`),
// identified by its PID and its start time (a PID alone is reused), and by
// the boot (a PID and start time repeat across reboots):
//
//	<tmp>/slivingdoc-<uid>-<hostPID>-<hash of start time and boot>/notebook
//
// Two hosts never share one: they differ in PID, or in start time when a
// PID is reused. The directory is not removed when a server exits (another
// process of the same host may be using it, or about to); a later server
// removes the directories of hosts that have ended, when their notebook
// directory is empty (one with files may hold edits not yet committed, and
// is kept).
//
// Where the host cannot be identified (Windows, Linux without a readable
// /proc, macOS or BSD without ps),
// each server process makes its own directory, <tmp>/slivingdoc-XXXX/notebook,
// as before.

// hostProc is what the session directory needs of one process.
type hostProc struct {
	pid, ppid int
	start     string   // its start time, in whatever stable form the OS gives
	argv      []string // its command line
}

// sessionDirPrefix starts every keyed session directory's name, followed
// by the user ID: a sweep only ever looks at this user's.
func sessionDirPrefix() string { return "slivingdoc-" + strconv.Itoa(os.Getuid()) + "-" }

// sessionDir returns the session directory of the host that started this
// process, creating it (and removing ended hosts' empty ones).
func sessionDir(log *slog.Logger) (string, error) {
	host, ok := findHost(os.Getppid(), readProc)
	if !ok {
		return privateSessionDir()
	}
	boot := bootID()
	sum := sha256.Sum256([]byte(host.start + "\x00" + boot))
	tmp := os.TempDir()
	if real, err := filepath.EvalSymlinks(tmp); err == nil {
		tmp = real // macOS /tmp: the path the tools report is the one the engine checks
	}
	sweepSessionDirs(tmp, boot, log)
	base := filepath.Join(tmp, sessionDirPrefix()+strconv.Itoa(host.pid)+"-"+hex.EncodeToString(sum[:6]))
	if err := os.Mkdir(base, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", err
	}
	// Another user may have made the name first in a shared tmp: use it
	// only when it is our own private directory.
	if err := ownPrivateDir(base); err != nil {
		return "", fmt.Errorf("%s: %w", base, err)
	}
	dir := filepath.Join(base, "notebook")
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", err
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", dir)
	}
	return dir, nil
}

// privateSessionDir makes <tmp>/slivingdoc-XXXX/notebook for this process
// alone.
func privateSessionDir() (string, error) {
	base, err := os.MkdirTemp("", "slivingdoc-")
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(base); err == nil {
		base = real
	}
	dir := filepath.Join(base, "notebook")
	return dir, os.Mkdir(dir, 0o700)
}

// maxLaunchers bounds the walk up the process tree.
const maxLaunchers = 8

// findHost walks up from pid past launchers to the host process.
func findHost(pid int, read func(int) (hostProc, error)) (hostProc, bool) {
	var last hostProc
	found := false
	for range maxLaunchers {
		if pid <= 1 {
			break
		}
		p, err := read(pid)
		if err != nil {
			break
		}
		last, found = p, true
		if !isLauncher(p.argv) {
			return p, true
		}
		pid = p.ppid
	}
	// Launchers all the way up (or the walk failed past the first): the
	// outermost process seen stands for the host.
	return last, found
}

// isLauncher reports whether a process with this command line only starts
// the server for someone else, and so is not the host: the npm launcher
// (node running slivingdoc's bin script), npm exec or npx (whose process
// title replaces argv), a shell running -c, env.
func isLauncher(argv []string) bool {
	if len(argv) == 0 {
		return false
	}
	// A process title set by node ("npm exec slivingdoc serve") may come
	// as one string.
	if len(argv) == 1 && strings.Contains(argv[0], " ") {
		argv = strings.Fields(argv[0])
	}
	base := func(s string) string { return strings.TrimSuffix(filepath.Base(s), ".exe") }
	switch b := base(argv[0]); b {
	case "npm", "npx", "env":
		return true
	case "sh", "bash", "dash", "zsh", "ksh", "ash":
		for _, a := range argv[1:] {
			if a == "-c" || (strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "c")) {
				return true
			}
		}
	case "node", "nodejs":
		for _, a := range argv[1:] {
			if strings.HasPrefix(a, "-") {
				continue
			}
			switch base(a) {
			case "npm-cli.js", "npx-cli.js", "npm", "npx", "slivingdoc", "slivingdoc.js":
				return true
			}
			return strings.Contains(filepath.ToSlash(a), "/slivingdoc/bin/")
		}
	}
	return false
}

// sweepSessionDirs removes the keyed session directories of ended hosts
// whose notebook directory is empty. Errors are ignored: a directory left
// behind is harmless, and another server may be sweeping too.
func sweepSessionDirs(tmp, boot string, log *slog.Logger) {
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	prefix := sessionDirPrefix()
	for _, e := range entries {
		name := e.Name()
		rest, ok := strings.CutPrefix(name, prefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, key, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || len(key) != 12 {
			continue
		}
		if p, err := readProc(pid); err == nil {
			sum := sha256.Sum256([]byte(p.start + "\x00" + boot))
			if hex.EncodeToString(sum[:6]) == key {
				continue // its host is still running
			}
		} else if !errors.Is(err, os.ErrNotExist) {
			continue // cannot tell: keep it
		}
		base := filepath.Join(tmp, name)
		if ownPrivateDir(base) != nil {
			continue
		}
		// os.Remove refuses a directory that still holds files.
		if os.Remove(filepath.Join(base, "notebook")) == nil || !exists(filepath.Join(base, "notebook")) {
			if os.Remove(base) == nil {
				log.Debug("removed the empty session directory of an ended host", "dir", base)
			}
		}
	}
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
