package dirstate

import (
	"errors"

	"github.com/slivingdoc/slivingdoc/server/pstate"
)

// State is the private state of one visible directory: its records
// (pstate.Dir) and the engine's hooks around its baseline.
type State struct {
	pstate.Dir
	// Remember records the engine's store for the directory with each
	// baseline (storeview.Identity.Remember; nil: not recorded).
	Remember func(realDir string)
	// Mem is what a long-lived engine remembers of this L (memory.go):
	// the baseline it last read or wrote, reused while P's file is
	// that one. nil: none (CLI), every load reads P.
	Mem *Memory
}

// LoadBaseline returns nil when the directory was never pulled, and
// pstate.ErrCorrupt when the baseline cannot be trusted (the caller logs
// it and treats the directory as never pulled: a pull then keeps every
// local file, at worst as a conflict block, and commits are refused until
// then).
func (d State) LoadBaseline() (*Baseline, error) {
	f, err := d.OpenBaseline()
	if f == nil {
		if err == nil {
			d.Mem.forgetBaseline()
		}
		return nil, err
	}
	defer f.Close()
	if b := d.Mem.recallBaseline(f); b != nil {
		return b, nil
	}
	rec, data, err := pstate.ReadBaseline(f)
	if err != nil {
		if errors.Is(err, pstate.ErrCorrupt) {
			d.Mem.forgetBaseline()
		}
		return nil, err
	}
	b := &Baseline{Baseline: *rec}
	b.Kept = d.Mem.keepBaseline(f, data, nil)
	return b, nil
}

// SaveBaseline records b as A (installing its prepared file when it has
// one that holds it) and remembers it.
func (d State) SaveBaseline(b *Baseline) error {
	if err := d.RecordWhere(); err != nil {
		return err
	}
	if d.Remember != nil {
		d.Remember(d.L)
	}
	d.Mem.forgetBaseline() // until the new file is in place
	data, err := d.WriteBaseline(&b.Baseline, b.Prepared)
	if err != nil {
		return err
	}
	d.keep(b, data)
	return nil
}

// InstallNextBaseline makes the next baseline written before a rewrite
// (n, as P keeps it) the baseline, and remembers it.
func (d State) InstallNextBaseline(next *Baseline, n pstate.NextBaseline) error {
	d.Mem.forgetBaseline()
	if err := d.Dir.InstallNextBaseline(n.File); err != nil {
		return err
	}
	d.keep(next, n.Data)
	return nil
}

// keep remembers b, whose file in P holds data, as the baseline.
func (d State) keep(b *Baseline, data []byte) {
	if f, err := d.OpenBaseline(); err == nil && f != nil {
		b.Kept = d.Mem.keepBaseline(f, data, b)
		f.Close()
	}
}
