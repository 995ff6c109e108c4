package seaweed

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Region is the region every Server answers for (SeaweedFS ignores it, the
// SDK signs with it).
const Region = "us-east-1"

const (
	readyTimeout = 2 * time.Minute // generous: the machine is shared with parallel builds
	stopTimeout  = 20 * time.Second
	launchTries  = 3 // a free port may be taken between probing and binding
)

// Server is one SeaweedFS process serving S3 on loopback. Its data survives
// Stop, Kill and Restart; Close (run by Start's Cleanup) removes it.
type Server struct {
	Endpoint  string // http://127.0.0.1:<port>
	Region    string
	AccessKey string // full rights
	SecretKey string
	// An identity that may read and list but not write: for access-denied tests.
	ReadOnlyAccessKey string
	ReadOnlySecretKey string
	Bucket            string // created at start, for tests that need no bucket of their own

	bin    string
	dir    string
	ports  ports
	shared bool

	mu   sync.Mutex
	proc *process // nil while stopped
}

type process struct {
	cmd    *exec.Cmd
	exited chan struct{}
	err    error // the Wait result, set before exited is closed
}

type ports struct{ master, masterGRPC, volume, volumeGRPC, filer, filerGRPC, s3, s3GRPC int }

// Start launches a server of the caller's own, stopped and deleted when tb
// ends. Use it when a test stops, kills or pauses the server; otherwise
// Shared is cheaper.
func Start(tb testing.TB) *Server {
	tb.Helper()
	s, err := launch(tb)
	if err != nil {
		tb.Fatalf("%v", err)
	}
	tb.Cleanup(s.Close)
	return s
}

var shared struct {
	once sync.Once
	srv  *Server
	err  error
}

// Shared returns the server shared by every test of this test binary,
// starting it on first use. It lives until the test binary exits; give each
// test its own bucket (NewBucket) or key prefix. Its fault controls refuse to
// run: one test must not break the server under the others.
func Shared(tb testing.TB) *Server {
	tb.Helper()
	shared.once.Do(func() {
		shared.srv, shared.err = launch(tb)
		if shared.srv != nil {
			shared.srv.shared = true
		}
	})
	if shared.err != nil {
		tb.Fatalf("%v", shared.err)
	}
	return shared.srv
}

func launch(tb testing.TB) (*Server, error) {
	if dir, err := CacheDir(); err == nil && os.Getenv(EnvBinary) == "" {
		if checkExecutable(filepath.Join(dir, exeName("weed"))) != nil {
			tb.Logf("seaweed: building SeaweedFS %s into %s (first use; takes minutes)", Version, dir)
		}
	}
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	sweepStale()
	dir, err := os.MkdirTemp("", fmt.Sprintf("slivingdoc-seaweed-%d-", os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("seaweed: data dir: %w", err)
	}
	s := &Server{
		Region:            Region,
		AccessKey:         "sd" + randomHex(9),
		SecretKey:         randomHex(20),
		ReadOnlyAccessKey: "ro" + randomHex(9),
		ReadOnlySecretKey: randomHex(20),
		Bucket:            "slivingdoc-test",
		bin:               bin,
		dir:               dir,
	}
	if err := s.writeConfig(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	for try := 1; ; try++ {
		if s.ports, err = freePorts(); err == nil {
			s.Endpoint = "http://127.0.0.1:" + strconv.Itoa(s.ports.s3)
			err = s.run()
		}
		if err == nil || try == launchTries {
			break
		}
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// identity is one entry of SeaweedFS's static s3 config file.
type identity struct {
	Name        string       `json:"name"`
	Credentials []credential `json:"credentials"`
	Actions     []string     `json:"actions"`
}

type credential struct {
	AccessKey string `json:"accessKey"`
	SecretKey string `json:"secretKey"`
}

func (s *Server) writeConfig() error {
	cfg := struct {
		Identities []identity `json:"identities"`
	}{[]identity{
		{"slivingdoc-admin", []credential{{s.AccessKey, s.SecretKey}}, []string{"Admin", "Read", "List", "Tagging", "Write"}},
		{"slivingdoc-reader", []credential{{s.ReadOnlyAccessKey, s.ReadOnlySecretKey}}, []string{"Read", "List"}},
	}}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(s.dir, "s3.json"), data, 0o600); err != nil {
		return fmt.Errorf("seaweed: s3 config: %w", err)
	}
	return nil
}

// args is the command line of one weed process: every listener on loopback
// and on our ports, sockets and state inside the data dir, no telemetry, no
// extra services, volumes small and counted from free disk so that many
// buckets fit, no pre-stop grace period (it would make every stop last ten
// seconds), and no resumed raft state (a lone master that resumes it waits
// for an election timeout before it leads; volumes and filer metadata keep
// the data either way), and a bucket deleted with its objects (NewBucket's
// cleanup) in one request.
func (s *Server) args() []string {
	p := s.ports
	return []string{"server",
		"-ip=127.0.0.1", "-ip.bind=127.0.0.1",
		"-dir=" + filepath.Join(s.dir, "data"),
		"-master.dir=" + filepath.Join(s.dir, "master"),
		"-master.port=" + strconv.Itoa(p.master), "-master.port.grpc=" + strconv.Itoa(p.masterGRPC),
		"-master.telemetry=false", "-master.volumeSizeLimitMB=64", "-master.resumeState=false",
		"-volume.port=" + strconv.Itoa(p.volume), "-volume.port.grpc=" + strconv.Itoa(p.volumeGRPC),
		"-volume.max=0", "-volume.preStopSeconds=0",
		"-filer", "-filer.port=" + strconv.Itoa(p.filer), "-filer.port.grpc=" + strconv.Itoa(p.filerGRPC),
		"-filer.localSocket=" + filepath.Join(s.dir, "filer.sock"),
		"-s3", "-s3.port=" + strconv.Itoa(p.s3), "-s3.port.grpc=" + strconv.Itoa(p.s3GRPC),
		"-s3.port.iceberg=0", "-s3.port.lance=0", "-s3.iam=false",
		"-s3.config=" + filepath.Join(s.dir, "s3.json"), "-s3.allowDeleteBucketNotEmpty",
		"-s3.localSocket=" + filepath.Join(s.dir, "s3.sock"),
	}
}

// run starts the process and waits until S3 round trips work.
func (s *Server) run() error {
	for _, sub := range []string{"data", "master"} {
		if err := os.MkdirAll(filepath.Join(s.dir, sub), 0o755); err != nil {
			return fmt.Errorf("seaweed: %w", err)
		}
	}
	logFile, err := os.OpenFile(s.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("seaweed: server log: %w", err)
	}
	fmt.Fprintf(logFile, "=== %s weed %s\n", time.Now().Format(time.RFC3339Nano), strings.Join(s.args(), " "))
	if err := s.writeSocketList(); err != nil {
		logFile.Close()
		return err
	}
	cmd := exec.Command(s.bin, s.args()...)
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := startChild(cmd); err != nil {
		logFile.Close()
		return fmt.Errorf("seaweed: start %s: %w", s.bin, err)
	}
	proc := &process{cmd: cmd, exited: make(chan struct{})}
	go func() {
		proc.err = cmd.Wait()
		logFile.Close()
		removeSockets(s.dir)
		close(proc.exited)
	}()
	s.mu.Lock()
	s.proc = proc
	s.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	if err := s.waitReady(ctx, proc); err != nil {
		_ = s.stop(true)
		return fmt.Errorf("seaweed: server on %s not ready: %w\n--- %s (tail) ---\n%s",
			s.Endpoint, err, s.logPath(), tail(s.logPath(), 40))
	}
	return nil
}

// waitReady polls until the default bucket exists and an object written to
// it reads back: only then can the filer and a volume take writes.
func (s *Server) waitReady(ctx context.Context, proc *process) error {
	// Without SDK retries: the refused connections of a starting server
	// would drain the client's retry budget and then fail fast for a while.
	client := s3.New(s.options(s.AccessKey, s.SecretKey), func(o *s3.Options) { o.Retryer = aws.NopRetryer{} })
	var last error
	for attempt := 0; ; attempt++ {
		select {
		case <-proc.exited:
			return fmt.Errorf("weed exited: %v", proc.err)
		case <-ctx.Done():
			return fmt.Errorf("%w (last attempt: %v)", ctx.Err(), last)
		case <-time.After(200 * time.Millisecond):
		}
		last = s.roundTrip(ctx, client, attempt)
		if last == nil {
			return nil
		}
	}
}

// roundTrip is one readiness attempt. Until the filer's lock ring forms,
// SeaweedFS holds a PUT for up to 15 s, and later PUTs of the same key queue
// behind it; so each attempt is short and writes a key of its own, and the
// first attempt after the ring formed succeeds at once.
func (s *Server) roundTrip(ctx context.Context, client *s3.Client, attempt int) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := createBucket(ctx, client, s.Bucket); err != nil {
		return err
	}
	key := fmt.Sprintf(".slivingdoc-ready/%s-%d", randomHex(4), attempt)
	if _, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: &s.Bucket, Key: &key, Body: strings.NewReader("ok")}); err != nil {
		return err
	}
	out, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.Bucket, Key: &key})
	if err != nil {
		return err
	}
	return out.Body.Close()
}

func createBucket(ctx context.Context, client *s3.Client, bucket string) error {
	_, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket})
	var owned *types.BucketAlreadyOwnedByYou
	if errors.As(err, &owned) {
		return nil // a restart finds the bucket of the previous run
	}
	return err
}

// Client returns an SDK client with full rights on this server.
func (s *Server) Client() *s3.Client { return s.client(s.AccessKey, s.SecretKey) }

// ReadOnlyClient returns an SDK client of the read-only identity.
func (s *Server) ReadOnlyClient() *s3.Client {
	return s.client(s.ReadOnlyAccessKey, s.ReadOnlySecretKey)
}

func (s *Server) client(access, secret string) *s3.Client {
	return s3.New(s.options(access, secret))
}

func (s *Server) options(access, secret string) s3.Options {
	return s3.Options{
		Region:       s.Region,
		BaseEndpoint: aws.String(s.Endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(access, secret, ""),
	}
}

// Env returns the environment that points the default AWS credential chain
// and endpoint resolution of a child process at this server.
func (s *Server) Env() []string {
	return []string{
		"AWS_ACCESS_KEY_ID=" + s.AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + s.SecretKey,
		"AWS_REGION=" + s.Region,
		"AWS_ENDPOINT_URL_S3=" + s.Endpoint,
		"AWS_EC2_METADATA_DISABLED=true",
	}
}

// NewBucket creates a bucket with a fresh name and returns the name. The
// bucket and its objects are deleted when tb ends: each bucket is a
// collection of its own, which takes several volumes, and a server's
// volumes are counted from free disk, so a shared server that kept every
// bucket ran out of them after about a hundred (a package at -count=20),
// and every later write failed with an internal error.
func (s *Server) NewBucket(tb testing.TB) string {
	tb.Helper()
	name := "t-" + randomHex(12)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := createBucket(ctx, s.Client(), name); err != nil {
		tb.Fatalf("seaweed: create bucket %s on %s: %v", name, s.Endpoint, err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		// Not a failure of the test: its verdict is in. The log says why a
		// later test may find the server short of volumes.
		if _, err := s.Client().DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: &name}); err != nil {
			tb.Logf("seaweed: delete bucket %s on %s: %v", name, s.Endpoint, err)
		}
	})
	return name
}

// Stop ends the server gracefully (SIGTERM, then SIGKILL after a grace
// period). Data stays for Restart.
func (s *Server) Stop(tb testing.TB) {
	tb.Helper()
	s.control(tb, "stop", func() error { return s.stop(false) })
}

// Kill ends the server with SIGKILL, as a crash would.
func (s *Server) Kill(tb testing.TB) {
	tb.Helper()
	s.control(tb, "kill", func() error { return s.stop(true) })
}

// Restart stops the server if it runs and starts it again on the same ports
// and data, returning when it serves again.
func (s *Server) Restart(tb testing.TB) {
	tb.Helper()
	s.control(tb, "restart", func() error {
		if err := s.stop(false); err != nil {
			return err
		}
		return s.run()
	})
}

// Pause freezes the process (SIGSTOP): connections are still accepted by the
// kernel but nothing answers, so requests time out after they were sent.
func (s *Server) Pause(tb testing.TB) {
	tb.Helper()
	s.control(tb, "pause", func() error { return s.signal(true) })
}

// Resume thaws a paused server.
func (s *Server) Resume(tb testing.TB) {
	tb.Helper()
	s.control(tb, "resume", func() error { return s.signal(false) })
}

func (s *Server) control(tb testing.TB, what string, op func() error) {
	tb.Helper()
	if s.shared {
		tb.Fatalf("seaweed: %s on the shared server would break the other tests; use seaweed.Start", what)
	}
	if err := op(); err != nil {
		tb.Fatalf("seaweed: %s: %v", what, err)
	}
}

// Pid is the running server process's ID, 0 while it is stopped (a
// restart runs another): for measurements that read its CPU.
func (s *Server) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return 0
	}
	return s.proc.cmd.Process.Pid
}

func (s *Server) signal(freeze bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return errors.New("server is not running")
	}
	if freeze {
		return pause(s.proc.cmd.Process)
	}
	return resume(s.proc.cmd.Process)
}

// stop ends the running process, if any, and waits for it to exit.
func (s *Server) stop(kill bool) error {
	s.mu.Lock()
	proc := s.proc
	s.proc = nil
	s.mu.Unlock()
	if proc == nil {
		return nil
	}
	select {
	case <-proc.exited:
		return nil // it died on its own; the log says why
	default:
	}
	if !kill {
		if err := terminate(proc.cmd.Process); err != nil {
			kill = true
		}
	}
	if !kill {
		select {
		case <-proc.exited:
			return nil
		case <-time.After(stopTimeout):
		}
	}
	if err := proc.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	<-proc.exited
	return nil
}

// Close kills the server and deletes its data (nothing is kept, so there is
// no point in a graceful stop). Start registers it with tb.Cleanup; calling
// it twice is harmless.
func (s *Server) Close() {
	_ = s.stop(true)
	_ = os.RemoveAll(s.dir)
}

// logPath is the server's combined output; a failed start quotes its tail.
func (s *Server) logPath() string { return filepath.Join(s.dir, "weed.log") }

// weed puts a unix socket per gRPC service into /tmp, named by port, and
// leaves it there when it dies. The data dir lists them, so that whoever
// sees the process gone (its own waiter, or sweepStale after the test
// binary died) removes them.
const socketList = "sockets"

func (s *Server) writeSocketList() error {
	p := s.ports
	var paths []string
	for _, svc := range []struct {
		name string
		port int
	}{{"master", p.masterGRPC}, {"volume", p.volumeGRPC}, {"filer", p.filerGRPC}, {"s3", p.s3GRPC}} {
		paths = append(paths, fmt.Sprintf("/tmp/seaweedfs-%s-grpc-%d.sock", svc.name, svc.port))
	}
	if err := os.WriteFile(filepath.Join(s.dir, socketList), []byte(strings.Join(paths, "\n")), 0o644); err != nil {
		return fmt.Errorf("seaweed: %w", err)
	}
	return nil
}

func removeSockets(dir string) {
	data, err := os.ReadFile(filepath.Join(dir, socketList))
	if err != nil {
		return
	}
	for _, p := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(p, "/tmp/seaweedfs-") && strings.HasSuffix(p, ".sock") {
			_ = os.Remove(p)
		}
	}
}

// freePorts asks the kernel for distinct free loopback ports. They are
// released before weed binds them, so launch retries if one got taken.
func freePorts() (ports, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var nums [8]int
	for i := range nums {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return ports{}, fmt.Errorf("seaweed: free port: %w", err)
		}
		ls = append(ls, l)
		nums[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports{nums[0], nums[1], nums[2], nums[3], nums[4], nums[5], nums[6], nums[7]}, nil
}

// sweepStale removes data dirs left by test processes that died without
// cleanup (the shared server's dir is never removed by its own process).
func sweepStale() {
	matches, _ := filepath.Glob(filepath.Join(os.TempDir(), "slivingdoc-seaweed-*-*"))
	for _, m := range matches {
		rest := strings.TrimPrefix(filepath.Base(m), "slivingdoc-seaweed-")
		pid, err := strconv.Atoi(rest[:max(strings.IndexByte(rest, '-'), 0)])
		if err != nil || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		removeSockets(m)
		_ = os.RemoveAll(m)
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
