//go:build unix

package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/slivingdoc/slivingdoc/server/diag"
)

// outcome classifies how one slivingdoc process ended.
type outcome string

const (
	outOK      outcome = "ok"      // exit 0
	outDomain  outcome = "error"   // exit 1 with an error report
	outKilled  outcome = "killed"  // SIGKILL sent by the campaign
	outTimeout outcome = "timeout" // ran past the time bound; the campaign killed it
	outBroken  outcome = "broken"  // anything else: exit 2, a crash, exit 1 without a report
)

// report is the parsed head of the candid error report a pull or commit
// prints on stdout (cmd/slivingdoc/output.go): "CODE · REASON", the
// message, optional detail, files, then "action:", "retryable:".
type report struct {
	Code      string
	Reason    string
	Action    string
	Retryable bool
	Detail    string
	Files     []string // the paths of the report's "file:" lines
}

// opResult is one process run.
type opResult struct {
	Op         string // "pull", "commit", ...
	Writer     int
	Outcome    outcome
	Report     report
	Generation uint64
	Start, End time.Time
	Output     string // stdout+stderr, kept for broken outcomes only
	Cause      string // an error's last log line (the cause behind the report)
}

func (r opResult) Duration() time.Duration { return r.End.Sub(r.Start) }

// parseReport reads an error report; ok is false when out is not one.
func parseReport(out string) (report, bool) {
	var rep report
	sc := bufio.NewScanner(strings.NewReader(out))
	first := true
	seenAction, seenRetryable := false, false
	for sc.Scan() {
		line := sc.Text()
		if first {
			first = false
			code, reason, ok := strings.Cut(line, " · ")
			if !ok || code == "" || strings.ToUpper(code) != code {
				return report{}, false
			}
			rep.Code, rep.Reason = code, strings.TrimSpace(reason)
			continue
		}
		switch {
		case strings.HasPrefix(line, "action: "):
			rep.Action, seenAction = strings.TrimPrefix(line, "action: "), true
		case strings.HasPrefix(line, "retryable: "):
			b, err := strconv.ParseBool(strings.TrimPrefix(line, "retryable: "))
			if err != nil {
				return report{}, false
			}
			rep.Retryable, seenRetryable = b, true
		case strings.HasPrefix(line, "file: "):
			path, _, _ := strings.Cut(strings.TrimPrefix(line, "file: "), " · ")
			rep.Files = append(rep.Files, path)
		case strings.HasPrefix(line, "detail: ") && rep.Detail == "":
			rep.Detail = strings.TrimPrefix(line, "detail: ")
		}
	}
	return rep, !first && seenAction && seenRetryable
}

// parseGeneration reads "OK  generation N" from a result.
func parseGeneration(out string) (uint64, bool) {
	first, _, _ := strings.Cut(out, "\n")
	rest, ok := strings.CutPrefix(first, "OK  generation ")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(strings.TrimSpace(rest), 10, 64)
	return n, err == nil
}

// checkCatalog reports how rep disagrees with the documented table
// (diag.Catalog): an unknown code/reason pair, or another action or
// retryability than documented. "" means it agrees.
func checkCatalog(rep report) string {
	for _, row := range diag.Catalog {
		if string(row.Code) != rep.Code || row.Reason != rep.Reason {
			continue
		}
		switch {
		case string(row.Action) != rep.Action:
			return fmt.Sprintf("%s·%s: action %s, documented %s", rep.Code, rep.Reason, rep.Action, row.Action)
		case row.Retryable != rep.Retryable:
			return fmt.Sprintf("%s·%s: retryable %t, documented %t", rep.Code, rep.Reason, rep.Retryable, row.Retryable)
		case rep.Detail != "" && !documentedDetail(rep.Detail):
			return fmt.Sprintf("%s·%s: detail %q is not in the closed set", rep.Code, rep.Reason, rep.Detail)
		}
		return ""
	}
	return fmt.Sprintf("%s·%s is not a documented error", rep.Code, rep.Reason)
}

func documentedDetail(d string) bool {
	for _, x := range diag.LocalIODetails {
		if x == d {
			return true
		}
	}
	return false
}

// proc is a running slivingdoc process that the campaign may kill.
type proc struct {
	cmd     *exec.Cmd
	started time.Time
	done    chan struct{} // closed after Wait
	killed  atomic.Bool   // set before the campaign's SIGKILL
}

// runProc runs bin with args in dir and classifies the end. The process is
// published through onStart (and withdrawn before return) so that a fault
// can kill it; bound is the time bound of one operation.
func runProc(bin, dir string, env []string, bound time.Duration, onStart func(*proc), args ...string) opResult {
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, env
	var out bytes.Buffer
	cmd.Stdout = &out
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	res := opResult{Op: args[0], Start: time.Now()}
	if err := cmd.Start(); err != nil {
		res.End, res.Outcome, res.Output = time.Now(), outBroken, err.Error()
		return res
	}
	p := &proc{cmd: cmd, started: res.Start, done: make(chan struct{})}
	onStart(p)
	// Only the time bound ends an operation early (besides a kill fault):
	// the campaign's own end waits for every operation to finish by itself.
	var timedOut atomic.Bool
	timer := time.AfterFunc(bound, func() { timedOut.Store(true); _ = cmd.Process.Kill() })
	err := cmd.Wait()
	timer.Stop()
	close(p.done)
	res.End = time.Now()
	onStart(nil)
	var exit *exec.ExitError
	switch {
	case err == nil:
		res.Outcome = outOK
		res.Generation, _ = parseGeneration(out.String())
	case timedOut.Load():
		res.Outcome = outTimeout
	case diedOfKill(cmd.ProcessState) && p.killed.Load():
		res.Outcome = outKilled
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		if rep, ok := parseReport(out.String()); ok {
			res.Outcome, res.Report = outDomain, rep
			res.Cause = lastLine(errOut.String())
			break
		}
		res.Outcome = outBroken
	default:
		res.Outcome = outBroken
	}
	if res.Outcome == outBroken || res.Outcome == outTimeout || res.Report.Action == "EDIT_FILES" {
		res.Output = fmt.Sprintf("%v\nstdout:\n%s\nstderr:\n%s", err, tail(out.String()), tail(errOut.String()))
	}
	return res
}

// diedOfKill reports whether a finished process died of SIGKILL.
func diedOfKill(ps *os.ProcessState) bool {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}

func tail(s string) string {
	const n = 2000
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
