//go:build failpoints

package crashpoint

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Enabled reports whether this build records crash points.
const Enabled = true

var rec struct {
	once  sync.Once
	mu    sync.Mutex
	at    int64  // the point to die at; 0: none
	atKey string // or the KEY#K to die at
	n     int64  // points reached so far
	keys  map[string]int
	trace *os.File
}

func setup() {
	rec.keys = map[string]int{}
	if s := os.Getenv("SLIVINGDOC_CRASH_AT"); strings.Contains(s, "#") {
		rec.atKey = s
	} else if s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 {
			// A typo must not turn a crash test into a test without crashes.
			fmt.Fprintf(os.Stderr, "crashpoint: SLIVINGDOC_CRASH_AT=%q is not a positive number\n", s)
			os.Exit(3)
		}
		rec.at = n
	}
	if p := os.Getenv("SLIVINGDOC_CRASH_TRACE"); p != "" {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			fmt.Fprintf(os.Stderr, "crashpoint: trace: %v\n", err)
			os.Exit(3)
		}
		rec.trace = f
	}
}

// Hit counts the point, traces it, and kills the process if it is the
// one SLIVINGDOC_CRASH_AT names. The lock makes points reached on several
// goroutines at once take distinct numbers; such points are numbered in
// whatever order they arrive, which call sites avoid.
func Hit(label, detail string) {
	rec.once.Do(setup)
	if !registered(label) {
		panic("crashpoint: unregistered label " + label)
	}
	rec.mu.Lock()
	rec.n++
	n := rec.n
	key := Key(label, detail)
	rec.keys[key]++
	key += "#" + strconv.Itoa(rec.keys[key])
	if rec.trace != nil {
		// One write per line (O_APPEND): the kernel keeps it whatever
		// happens to the process next.
		detail = strings.ReplaceAll(detail, "\n", " ")
		_, _ = rec.trace.WriteString(strconv.FormatInt(n, 10) + " " + key + " " + detail + "\n")
	}
	if n == rec.at || key == rec.atKey {
		kill()
	}
	rec.mu.Unlock()
}

// kill ends the process abruptly and never returns (the lock stays held,
// so no other goroutine gets past a point meanwhile).
func kill() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		_ = p.Kill() // SIGKILL on unix, TerminateProcess on windows
	}
	select {}
}
