package filestore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/filestore"
)

// The file store's conditional writes must hold across processes, not just
// goroutines: these tests re-execute the test binary as N writers.

const (
	envWorkerMode = "SLIVINGDOC_FILE_WORKER"
	envWorkerDir  = "SLIVINGDOC_FILE_WORKER_DIR"
	envWorkerID   = "SLIVINGDOC_FILE_WORKER_ID"
	envWorkerN    = "SLIVINGDOC_FILE_WORKER_N"
	processes     = 6
)

// TestFileWorker is not a test: it is the body of one writer process.
func TestFileWorker(t *testing.T) {
	mode := os.Getenv(envWorkerMode)
	if mode == "" {
		t.Skip("runs only as a child process of the cross-process tests")
	}
	dir := os.Getenv(envWorkerDir)
	id := os.Getenv(envWorkerID)
	n, _ := strconv.Atoi(os.Getenv(envWorkerN))
	s, err := filestore.New(filepath.Join(dir, "store"))
	if err != nil {
		fmt.Println("error", err)
		return
	}
	ctx := context.Background()
	switch mode {
	case "race":
		_, etag, err := s.Get(ctx, "current")
		if err != nil {
			fmt.Println("error", err)
			return
		}
		fileBarrier(dir, id, n)
		_, err = s.ReplaceIfMatch(ctx, "current", []byte("writer "+id), etag)
		switch {
		case err == nil:
			fmt.Println("won")
		case errors.Is(err, remote.ErrPrecondition):
			fmt.Println("lost")
		default:
			fmt.Println("error", err)
		}
	case "count":
		fileBarrier(dir, id, n)
		for done := 0; done < 10; {
			data, etag, err := s.Get(ctx, "counter")
			if err != nil {
				fmt.Println("error", err)
				return
			}
			v, _ := strconv.Atoi(string(data))
			_, err = s.ReplaceIfMatch(ctx, "counter", []byte(strconv.Itoa(v+1)), etag)
			switch {
			case err == nil:
				done++
			case !errors.Is(err, remote.ErrPrecondition):
				fmt.Println("error", err)
				return
			}
		}
		fmt.Println("done")
	}
}

// fileBarrier announces this process and waits until n have arrived.
func fileBarrier(dir, id string, n int) {
	_ = os.WriteFile(filepath.Join(dir, "ready-"+id), nil, 0o644)
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if m, _ := filepath.Glob(filepath.Join(dir, "ready-*")); len(m) >= n {
			return
		}
	}
}

// runWorkers starts the writer processes and returns each one's verdict.
func runWorkers(t *testing.T, dir, mode string) []string {
	t.Helper()
	cmds := make([]*exec.Cmd, processes)
	outs := make([]strings.Builder, processes)
	for i := range cmds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestFileWorker$", "-test.count=1")
		cmd.Env = append(os.Environ(), envWorkerMode+"="+mode, envWorkerDir+"="+dir,
			envWorkerID+"="+strconv.Itoa(i), envWorkerN+"="+strconv.Itoa(processes))
		cmd.Stdout = &outs[i]
		cmd.Stderr = &outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
	}
	verdicts := make([]string, processes)
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("worker %d: %v\n%s", i, err, outs[i].String())
		}
		verdicts[i] = strings.TrimSpace(strings.SplitN(outs[i].String(), "\n", 2)[0])
		if strings.HasPrefix(verdicts[i], "error") || verdicts[i] == "" {
			t.Fatalf("worker %d: %s", i, outs[i].String())
		}
	}
	return verdicts
}

func TestFileProcessesRaceReplace(t *testing.T) {
	dir := t.TempDir()
	s, err := filestore.New(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.CreateIfAbsent(ctx, "current", []byte("base")); err != nil {
		t.Fatal(err)
	}
	verdicts := runWorkers(t, dir, "race")
	winner := -1
	for i, v := range verdicts {
		switch v {
		case "won":
			if winner >= 0 {
				t.Fatalf("processes %d and %d both won: %v", winner, i, verdicts)
			}
			winner = i
		case "lost":
		default:
			t.Fatalf("process %d: verdict %q", i, v)
		}
	}
	if winner < 0 {
		t.Fatalf("no process won: %v", verdicts)
	}
	data, _, err := s.Get(ctx, "current")
	if err != nil || string(data) != fmt.Sprintf("writer %d", winner) {
		t.Fatalf("current = %q, %v; the winner was %d", data, err, winner)
	}
}

func TestFileProcessesNoLostUpdates(t *testing.T) {
	dir := t.TempDir()
	s, err := filestore.New(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.CreateIfAbsent(ctx, "counter", []byte("0")); err != nil {
		t.Fatal(err)
	}
	for i, v := range runWorkers(t, dir, "count") {
		if v != "done" {
			t.Fatalf("process %d: %q", i, v)
		}
	}
	data, _, err := s.Get(ctx, "counter")
	if want := strconv.Itoa(processes * 10); err != nil || string(data) != want {
		t.Fatalf("counter = %q, %v; want %s: an update was lost across processes", data, err, want)
	}
}
