package main

// Why a spawner: on Linux a child's ru_maxrss counts the memory of the
// process that forked it, because Go starts children with vfork (CLONE_VM)
// and the kernel records the shared address space's high-water mark at
// exec. Started from the load generator, which holds notebooks and 5 MB
// merge inputs in memory, every child would report the load generator's
// RSS. So the load generator starts a copy of itself at the very beginning,
// while it is small, and that copy starts every measured process and
// reports its wall time and rusage. The spawner's own RSS is then the floor
// of the RSS figures (Meta.RSSFloorKiB: /bin/true started the same way).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

const spawnerArg = "-loadgen-spawner"

type spawnRequest struct {
	ID   int64
	Bin  string
	Args []string
	Env  []string // nil: the spawner's environment
	Dir  string
	// StdoutFile, when set, receives the standard output instead of the
	// reply: the spawner must never hold large data (its peak RSS is the
	// floor of every later figure).
	StdoutFile string
}

type spawnReply struct {
	ID     int64
	Wall   time.Duration
	CPU    time.Duration
	RSSKiB int64
	Exit   int // -1: did not run or killed
	Stdout []byte
	Stderr []byte
	Err    string // the process could not be started
}

// spawnerMain serves requests from stdin until it closes, then kills what
// still runs and exits.
func spawnerMain() {
	var mu sync.Mutex
	enc := json.NewEncoder(os.Stdout)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var req spawnRequest
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			fmt.Fprintf(os.Stderr, "loadgen spawner: bad request: %v\n", err)
			os.Exit(2)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rep := spawn(ctx, req)
			mu.Lock()
			defer mu.Unlock()
			_ = enc.Encode(rep)
		}()
	}
	cancel()
	wg.Wait()
	os.Exit(0)
}

func spawn(ctx context.Context, req spawnRequest) spawnReply {
	cmd := exec.CommandContext(ctx, req.Bin, req.Args...)
	cmd.Env, cmd.Dir = req.Env, req.Dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if req.StdoutFile != "" {
		f, err := os.Create(req.StdoutFile)
		if err != nil {
			return spawnReply{ID: req.ID, Exit: -1, Err: err.Error()}
		}
		defer f.Close()
		cmd.Stdout = f
	}
	start := time.Now()
	err := cmd.Run()
	rep := spawnReply{ID: req.ID, Wall: time.Since(start), Exit: -1}
	if cmd.ProcessState != nil {
		rep.CPU, rep.RSSKiB = usage(cmd.ProcessState)
		rep.Exit = cmd.ProcessState.ExitCode()
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		rep.Err = err.Error()
	}
	rep.Stdout, rep.Stderr = out.Bytes(), errOut.Bytes()
	return rep
}

// spawner is the load generator's handle on its spawner process.
type spawner struct {
	cmd *exec.Cmd
	in  io.WriteCloser

	mu      sync.Mutex
	enc     *json.Encoder
	next    int64
	pending map[int64]chan spawnReply
	dead    error
}

func startSpawner() (*spawner, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, spawnerArg)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &spawner{cmd: cmd, in: in, enc: json.NewEncoder(in), pending: map[int64]chan spawnReply{}}
	go s.read(out)
	return s, nil
}

func (s *spawner) read(out io.Reader) {
	dec := json.NewDecoder(out)
	for {
		var rep spawnReply
		if err := dec.Decode(&rep); err != nil {
			s.mu.Lock()
			s.dead = fmt.Errorf("loadgen spawner: %w", err)
			for _, ch := range s.pending {
				close(ch)
			}
			s.pending = nil
			s.mu.Unlock()
			return
		}
		s.mu.Lock()
		ch := s.pending[rep.ID]
		delete(s.pending, rep.ID)
		s.mu.Unlock()
		if ch != nil {
			ch <- rep
		}
	}
}

// run runs one process through the spawner and waits for it.
func (s *spawner) run(ctx context.Context, req spawnRequest) (spawnReply, error) {
	s.mu.Lock()
	if s.dead != nil {
		s.mu.Unlock()
		return spawnReply{}, s.dead
	}
	s.next++
	req.ID = s.next
	ch := make(chan spawnReply, 1)
	s.pending[req.ID] = ch
	err := s.enc.Encode(req)
	s.mu.Unlock()
	if err != nil {
		return spawnReply{}, err
	}
	select {
	case rep, ok := <-ch:
		if !ok {
			return spawnReply{}, s.dead
		}
		return rep, nil
	case <-ctx.Done():
		return spawnReply{}, ctx.Err()
	}
}

func (s *spawner) close() {
	_ = s.in.Close()
	_ = s.cmd.Wait()
}
