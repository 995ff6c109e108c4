//go:build unix

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/server/diag"
)

// The report parser reads what the real binary prints: a commit in a
// directory never pulled is INVALID_REQUEST·NOT_PULLED, PULL_FIRST, not
// retryable, and that agrees with the documented table.
func TestReportOfTheRealBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "slivingdoc")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/slivingdoc/slivingdoc/cmd/slivingdoc").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	nb := filepath.Join(dir, "nb")
	if err := os.Mkdir(nb, 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"SLIVINGDOC_STORE=file://" + filepath.Join(dir, "store"), "SLIVINGDOC_PRIVATE_ROOT=" + filepath.Join(dir, "priv"),
		"HOME=" + dir, "NO_COLOR=1"}
	res := runProc(bin, nb, env, time.Minute, func(*proc) {}, "commit", "-m", "x")
	want := report{Code: string(diag.CodeInvalidRequest), Reason: diag.ReasonNotPulled, Action: string(diag.ActionPullFirst)}
	if res.Outcome != outDomain || !reflect.DeepEqual(res.Report, want) {
		t.Fatalf("commit before pull: %s %+v, want error %+v\n%s", res.Outcome, res.Report, want, res.Output)
	}
	if msg := checkCatalog(res.Report); msg != "" {
		t.Fatalf("checkCatalog: %s", msg)
	}
	res = runProc(bin, nb, env, time.Minute, func(*proc) {}, "pull")
	if res.Outcome != outOK || res.Generation != 0 {
		t.Fatalf("pull: %s generation %d, want ok 0\n%s", res.Outcome, res.Generation, res.Output)
	}
	if err := os.WriteFile(filepath.Join(nb, "a.md"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res = runProc(bin, nb, env, time.Minute, func(*proc) {}, "commit", "-m", "x")
	if res.Outcome != outOK || res.Generation != 1 {
		t.Fatalf("commit: %s generation %d, want ok 1\n%s", res.Outcome, res.Generation, res.Output)
	}
}

func TestParseReport(t *testing.T) {
	full := "ENGINE_FAILED · LOCAL_IO\nA local file operation failed: disk full.\ndetail: disk full\naction: CHECK_HOST\nretryable: true\ndiagnosticId: 0011223344556677\n"
	rep, ok := parseReport(full)
	want := report{Code: "ENGINE_FAILED", Reason: "LOCAL_IO", Action: "CHECK_HOST", Retryable: true, Detail: "disk full"}
	if !ok || !reflect.DeepEqual(rep, want) {
		t.Fatalf("parseReport = %+v, %t; want %+v", rep, ok, want)
	}
	conflict := "CONTENT_CONFLICT · MERGE_CONFLICT\nm\nfile: shared.md · TEXT_CONFLICT · lines 2-6\nfile: w01.md · MODIFY_DELETE\naction: EDIT_FILES\nretryable: false\n"
	if rep, ok := parseReport(conflict); !ok || !reflect.DeepEqual(rep.Files, []string{"shared.md", "w01.md"}) {
		t.Fatalf("parseReport files = %v, %t", rep.Files, ok)
	}
	for _, bad := range []string{
		"",
		"OK  generation 3\n",
		"ENGINE_FAILED · LOCAL_IO\naction: CHECK_HOST\n",        // no retryable line
		"ENGINE_FAILED · LOCAL_IO\nretryable: true\n",           // no action line
		"ENGINE_FAILED · LOCAL_IO\naction: X\nretryable: maybe", // unreadable verdict
	} {
		if _, ok := parseReport(bad); ok {
			t.Errorf("parseReport(%q) accepted a non-report", bad)
		}
	}
}

// Every documented row passes; a wrong action, a wrong retryability, an
// undocumented reason or detail is flagged.
func TestCheckCatalog(t *testing.T) {
	for _, row := range diag.Catalog {
		rep := report{Code: string(row.Code), Reason: row.Reason, Action: string(row.Action), Retryable: row.Retryable}
		if msg := checkCatalog(rep); msg != "" {
			t.Errorf("documented row flagged: %s", msg)
		}
	}
	good := report{Code: "STORAGE_FAILURE", Reason: "STORE_UNREACHABLE", Action: "RETRY", Retryable: true}
	for name, rep := range map[string]report{
		"action":    {Code: good.Code, Reason: good.Reason, Action: "CHECK_HOST", Retryable: true},
		"retryable": {Code: good.Code, Reason: good.Reason, Action: "RETRY", Retryable: false},
		"reason":    {Code: good.Code, Reason: "DISK_ON_FIRE", Action: "RETRY", Retryable: true},
		"code":      {Code: "OOPS", Reason: good.Reason, Action: "RETRY", Retryable: true},
		"detail":    {Code: "ENGINE_FAILED", Reason: "LOCAL_IO", Action: "CHECK_HOST", Retryable: true, Detail: "gremlins"},
	} {
		if checkCatalog(rep) == "" {
			t.Errorf("wrong %s not flagged: %+v", name, rep)
		}
	}
}

// A kill aimed at a writer lands on its running process, which then
// counts as killed by the campaign, not as broken; a process past the
// time bound is killed and counts as a timeout.
func TestKillAndTimeBound(t *testing.T) {
	w := &writer{id: 0, dir: t.TempDir(), started: make(chan struct{}, 1)}
	done := make(chan opResult)
	go func() {
		done <- runProc("/bin/sleep", w.dir, nil, time.Minute, w.setProc, "30")
	}()
	if !w.kill(context.Background(), 50*time.Millisecond, 10*time.Second) {
		t.Fatal("kill did not land on the running process")
	}
	if res := <-done; res.Outcome != outKilled {
		t.Fatalf("killed process: outcome %s, want %s", res.Outcome, outKilled)
	}
	if w.kill(context.Background(), 0, 200*time.Millisecond) {
		t.Fatal("kill reported landing with no process running")
	}
	res := runProc("/bin/sleep", w.dir, nil, 200*time.Millisecond, func(*proc) {}, "30")
	if res.Outcome != outTimeout || res.Duration() > 10*time.Second {
		t.Fatalf("bounded process: outcome %s after %s, want %s soon after the bound", res.Outcome, res.Duration(), outTimeout)
	}
	// A SIGKILL the campaign did not send is a broken outcome.
	stray := runProc("/bin/sh", w.dir, nil, time.Minute, func(*proc) {}, "-c", "kill -9 $$")
	if stray.Outcome != outBroken {
		t.Fatalf("self-killed process: outcome %s, want %s", stray.Outcome, outBroken)
	}
}
