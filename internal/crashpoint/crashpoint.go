// Package crashpoint marks the instants where a crash test may kill the
// process: one call, Hit, made just before every durable side effect an
// operation makes (a file written, renamed or removed, a directory made
// or fsynced, in the notebook directory or the private root, and every
// request that changes the store).
//
// In a normal build Hit is an empty function the compiler inlines away.
// In a build with -tags failpoints, two environment variables drive it:
//
//   - SLIVINGDOC_CRASH_AT=N kills the process (SIGKILL, as a power cut or
//     kill -9 would, as far as files and the store are concerned) at the
//     N-th point it reaches, counting from 1; Hit never returns there.
//   - SLIVINGDOC_CRASH_TRACE=FILE appends one line per point reached,
//     "N label detail", before the kill, so a test learns how many points
//     an operation has and which one it died at.
//
// A point's label names the kind of effect (a constant registered with
// Register, so a test can list every label and fail when its scenarios
// never reach one); its detail (a file name, a store key) only helps a
// human reading a trace. Points are numbered in the order the process
// reaches them: call sites sit where the code runs in one goroutine, so
// that the N-th point is the same effect on every run of the same
// operation on the same state.
package crashpoint

import (
	"slices"
	"sync"
)

var registry struct {
	mu     sync.Mutex
	labels []string
}

// Register declares label as a crash point label and returns it. Call
// sites register at package initialisation (var x = Register("...")), so
// Labels knows every label of the binary whether or not it was reached.
func Register(label string) string {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if !slices.Contains(registry.labels, label) {
		registry.labels = append(registry.labels, label)
	}
	return label
}

// Labels returns every registered label, sorted.
func Labels() []string {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	return slices.Sorted(slices.Values(registry.labels))
}

func registered(label string) bool {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	return slices.Contains(registry.labels, label)
}
