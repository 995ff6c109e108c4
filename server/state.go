package server

import (
	"errors"
	"reflect"
	"sort"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/server/plan"
	"github.com/slivingdoc/slivingdoc/server/pstate"
	"github.com/slivingdoc/slivingdoc/server/rules"
)

// Private state (P). Its files, their formats and their writing are
// package pstate's (its doc comment lists P's layout and what each file
// holds); here is the engine's side of them: where a directory's records
// are (stateDir), the baseline as the engine holds it (the record, and
// what a long-lived engine remembers of it: memory.go), and the reading
// and writing of the baseline through that memory.

// storeDir is P/stores/<key> of the store as last identified (server/storeview).
func (e *Engine) storeDir() string { return e.ident.Dir() }

// stateDir is the private state of L = dir, keyed by dir's resolved
// identity (symlinks resolved), so a symlink alias and the real path share
// one baseline and one lock. State recorded under the path as given (before
// identities were resolved) is still found there.
func (e *Engine) stateDir(dir string) string { return e.stateDirOf(dir, rules.RealPath(dir)) }

// stateDirOf is stateDir of dir, whose resolved path is real.
func (e *Engine) stateDirOf(dir, real string) string {
	return pstate.DirPath(e.private, e.store.Identity(), dir, real)
}

// baseline is A as the engine holds it: P's record (pstate.Baseline) and
// what the engine learned of it or prepared for it.
type baseline struct {
	pstate.Baseline

	// ignored is A's files at the paths the engine's ignore rules match,
	// when known (ignoredKnown): addVirtual's walk over every path of A,
	// done once per baseline a long-lived engine keeps (memory.go) rather
	// than on every call. kept is that memory (nil: none).
	ignored      []plan.PathID
	ignoredKnown bool
	kept         *keptBaseline
	// prepared is this baseline already written to a durable temporary
	// file, while it was being published (nil: none): saving it is then
	// the exchange and the directory's fsync.
	prepared *pstate.Prepared
}

// newBaseline is the baseline of generation gen, whose head is head and
// whose tree is files.
func newBaseline(gen uint64, head cas.ID, files map[string]cas.ID) *baseline {
	return &baseline{Baseline: pstate.Baseline{Generation: gen, Head: head, Files: files}}
}

// exact is pstate.Baseline.Exact, true also of no baseline at all.
func (b *baseline) exact() bool { return b == nil || b.Exact() }

// dirState is the private state of one visible directory: its records
// (pstate.Dir) and the engine's hooks around its baseline.
type dirState struct {
	pstate.Dir
	// remember records the engine's store for the directory with each
	// baseline (storeview.Identity.Remember; nil: not recorded).
	remember func(realDir string)
	// kept is what a long-lived engine remembers of this L (memory.go):
	// the baseline it last read or wrote, reused while P's file is
	// that one. nil: none (CLI), every load reads P.
	kept *dirMemory
}

// dirStateOf is the private state of L = dir, whose resolved path is real.
func (e *Engine) dirStateOf(dir, real string) dirState {
	return dirState{Dir: pstate.Dir{Path: e.stateDirOf(dir, real), L: real, Store: e.storeKey}, remember: e.ident.Remember}
}

// loadBaseline returns nil when the directory was never pulled, and
// pstate.ErrCorrupt when the baseline cannot be trusted (the caller logs
// it and treats the directory as never pulled: a pull then keeps every
// local file, at worst as a conflict block, and commits are refused until
// then).
func (d dirState) loadBaseline() (*baseline, error) {
	f, err := d.OpenBaseline()
	if f == nil {
		if err == nil {
			d.kept.forgetBaseline()
		}
		return nil, err
	}
	defer f.Close()
	if b := d.kept.recallBaseline(f); b != nil {
		return b, nil
	}
	rec, data, err := pstate.ReadBaseline(f)
	if err != nil {
		if errors.Is(err, pstate.ErrCorrupt) {
			d.kept.forgetBaseline()
		}
		return nil, err
	}
	b := &baseline{Baseline: *rec}
	b.kept = d.kept.keepBaseline(f, data, nil)
	return b, nil
}

// saveBaseline records b as A (installing its prepared file when it has
// one that holds it) and remembers it.
func (d dirState) saveBaseline(b *baseline) error {
	if err := d.RecordWhere(); err != nil {
		return err
	}
	if d.remember != nil {
		d.remember(d.L)
	}
	d.kept.forgetBaseline() // until the new file is in place
	data, err := d.WriteBaseline(&b.Baseline, b.prepared)
	if err != nil {
		return err
	}
	d.keep(b, data)
	return nil
}

// installNextBaseline makes the next baseline written before a rewrite
// the baseline, and remembers it.
func (d dirState) installNextBaseline(next *baseline, data []byte) error {
	d.kept.forgetBaseline()
	if err := d.InstallNextBaseline(); err != nil {
		return err
	}
	d.keep(next, data)
	return nil
}

// keep remembers b, whose file in P holds data, as the baseline.
func (d dirState) keep(b *baseline, data []byte) {
	if f, err := d.OpenBaseline(); err == nil && f != nil {
		b.kept = d.kept.keepBaseline(f, data, b)
		f.Close()
	}
}

// sameMap reports whether a and b are one map (not merely equal ones).
func sameMap(a, b map[string]cas.ID) bool {
	if a == nil || b == nil {
		return false
	}
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
