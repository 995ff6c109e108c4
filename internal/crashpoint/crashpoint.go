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
//     N-th point it reaches, counting from 1; SLIVINGDOC_CRASH_AT=KEY#K at
//     the K-th point whose key is KEY. Hit never returns there.
//   - SLIVINGDOC_CRASH_TRACE=FILE appends one line per point reached,
//     "N KEY#K detail", before the kill, so a test learns how many points
//     an operation has and which one it died at.
//
// A point's label names the kind of effect (a constant registered with
// Register, so a test can list every label and fail when its scenarios
// never reach one); its detail names the file or store key. Its key
// (Key) is the label and the shape of the detail's last element, hashes
// and IDs blotted out, so that it names the same effect on every run.
// Points are numbered in the order the process reaches them. An
// operation that overlaps two effects (a pack upload and a record write,
// say) may reach their points in either order, so the N-th point is not
// always the same effect; KEY#K is, which is why a test kills by key.
//
// explore.go is the other half of deterministic fault testing: a
// schedule explorer (Explore, Sample, Replay) over choice sequences,
// which the publication protocol's exhaustive test (publish) uses to
// order 2–3 writers' store requests and place faults among them.
package crashpoint

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/slivingdoc/slivingdoc/internal/noinit"
)

// registry holds the labels in a fixed array: Register runs at package
// initialisation in every process, and appending to a slice there would
// allocate before main (cmd/slivingdoc's TestStartupOurPackagesDoNoWorkAtInit).
var registry struct {
	mu     sync.Mutex
	labels [maxLabels]string
	n      int
}

// maxLabels bounds the registry; Register panics beyond it, at package
// initialisation, so a build with one label too many fails its first run.
const maxLabels = 64

// Register declares label as a crash point label and returns it. Call
// sites register at package initialisation (var x = Register("...")), so
// Labels knows every label of the binary whether or not it was reached.
func Register(label string) string {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if slices.Contains(registry.labels[:registry.n], label) {
		return label
	}
	if registry.n == maxLabels {
		panic("crashpoint: more than maxLabels labels; raise maxLabels")
	}
	registry.labels[registry.n] = label
	registry.n++
	return label
}

// Labels returns every registered label, sorted.
func Labels() []string {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	return slices.Sorted(slices.Values(registry.labels[:registry.n]))
}

func registered(label string) bool {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	return slices.Contains(registry.labels[:registry.n], label)
}

// hexRun matches what varies from run to run in a file name or store key:
// hashes, random suffixes, publication IDs. Compiled on first use, not at
// package init: only crash-test builds and their tests name points.
func hexRun() *regexp.Regexp {
	return hexRunOnce.Get(func() *regexp.Regexp { return regexp.MustCompile(`[0-9a-f]{4,}`) })
}

var hexRunOnce noinit.Lazy[*regexp.Regexp]

// Key names a point (label and detail) the same way on every run: the
// label, "|", and the last element of detail with every run of 4 or more
// hexadecimal digits replaced by "#" (and spaces by "_").
func Key(label, detail string) string {
	base := filepath.Base(filepath.ToSlash(detail))
	if detail == "" {
		base = ""
	}
	return label + "|" + strings.ReplaceAll(hexRun().ReplaceAllString(base, "#"), " ", "_")
}
