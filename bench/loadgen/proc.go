package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Sample is the cost of one whole slivingdoc (or reference) process.
type Sample struct {
	Wall   time.Duration
	CPU    time.Duration // user + system, from the child's rusage
	RSSKiB int64         // maximum resident set size
}

// Outcome is one CLI run: its cost and what it reported. Code is "" for
// OK (exit 0) and the error report's code token otherwise (exit 1).
type Outcome struct {
	Sample
	Code       string
	Reason     string
	Generation uint64
	Stdout     string
}

// errUsage marks an exit status 2 (usage or setup error): the load
// generator's own mistake or a broken environment, never a measurement.
var errUsage = errors.New("slivingdoc exited 2")

// procSpawner, when set, starts every measured process (see spawner.go);
// otherwise they are started directly (tests; RSS then includes ours).
var procSpawner *spawner

// execute runs one process and returns its cost, output and exit status
// (-1 when it did not run to an exit).
func execute(ctx context.Context, req spawnRequest) (Sample, []byte, []byte, int, error) {
	if procSpawner != nil {
		rep, err := procSpawner.run(ctx, req)
		if err == nil && rep.Err != "" {
			err = errors.New(rep.Err)
		}
		return Sample{rep.Wall, rep.CPU, rep.RSSKiB}, rep.Stdout, rep.Stderr, rep.Exit, err
	}
	rep := spawn(ctx, req)
	var err error
	if rep.Err != "" {
		err = errors.New(rep.Err)
	}
	return Sample{rep.Wall, rep.CPU, rep.RSSKiB}, rep.Stdout, rep.Stderr, rep.Exit, err
}

// runCLI runs one slivingdoc process with env.
func runCLI(ctx context.Context, bin string, env []string, args ...string) (Outcome, error) {
	s, out, errOut, exit, err := execute(ctx, spawnRequest{Bin: bin, Args: args, Env: env})
	o := Outcome{Sample: s, Stdout: string(out)}
	switch {
	case err != nil:
		return o, fmt.Errorf("slivingdoc %s: %w\n%s", strings.Join(args, " "), err, errOut)
	case exit == 0:
		o.Generation = parseGeneration(o.Stdout)
		return o, nil
	case exit == 1:
		o.Code, o.Reason = parseReport(o.Stdout)
		if o.Code == "" {
			return o, fmt.Errorf("slivingdoc %s: exit 1 without a report:\n%s%s", strings.Join(args, " "), o.Stdout, errOut)
		}
		return o, nil
	case exit == 2:
		return o, fmt.Errorf("%w: slivingdoc %s:\n%s%s", errUsage, strings.Join(args, " "), o.Stdout, errOut)
	default:
		return o, fmt.Errorf("slivingdoc %s: exit status %d\n%s", strings.Join(args, " "), exit, errOut)
	}
}

// parseGeneration reads "OK  generation N" from a pull or commit result.
func parseGeneration(out string) uint64 {
	first, _, _ := strings.Cut(out, "\n")
	rest, ok := strings.CutPrefix(first, "OK  generation ")
	if !ok {
		return 0
	}
	n, _ := strconv.ParseUint(strings.TrimSpace(rest), 10, 64)
	return n
}

// parseReport reads the "CODE · REASON" head line of an error report.
func parseReport(out string) (code, reason string) {
	first, _, _ := strings.Cut(out, "\n")
	code, reason, ok := strings.Cut(first, " · ")
	if !ok || code == "" || strings.ToUpper(code) != code {
		return "", ""
	}
	return code, strings.TrimSpace(reason)
}

// runTimed runs a reference command (git, merge-file) in dir and returns
// its cost and output. git merge-file's exit status is its conflict count,
// so any status of it is accepted.
func runTimed(ctx context.Context, dir string, name string, args ...string) (Sample, []byte, error) {
	return runTimedTo(ctx, dir, "", name, args...)
}

// runTimedTo is runTimed with the standard output written to stdoutFile.
func runTimedTo(ctx context.Context, dir, stdoutFile string, name string, args ...string) (Sample, []byte, error) {
	env := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C")
	s, out, errOut, exit, err := execute(ctx, spawnRequest{Bin: name, Args: args, Env: env, Dir: dir, StdoutFile: stdoutFile})
	mergeFile := name == "git" && len(args) > 0 && args[0] == "merge-file"
	if err == nil && exit != 0 && !(mergeFile && exit > 0) {
		err = fmt.Errorf("exit status %d", exit)
	}
	if err != nil {
		return s, nil, fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, errOut)
	}
	return s, out, nil
}
