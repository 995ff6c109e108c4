package dirstate

import (
	"reflect"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/server/plan"
	"github.com/slivingdoc/slivingdoc/server/pstate"
)

// Baseline is A as the engine holds it: P's record (pstate.Baseline) and
// what the engine learned of it or prepared for it.
type Baseline struct {
	pstate.Baseline

	// Ignored is A's files at the paths the engine's ignore rules match,
	// when known (IgnoredKnown): AddVirtual's walk over every path of A,
	// done once per baseline a long-lived engine keeps (memory.go) rather
	// than on every call. Kept is that memory (nil: none).
	Ignored      []plan.PathID
	IgnoredKnown bool
	Kept         *Kept
	// Prepared is this baseline already written to a durable temporary
	// file, while it was being published (nil: none): saving it is then
	// the exchange and the directory's fsync.
	Prepared *pstate.Prepared
}

// NewBaseline is the baseline of generation gen, whose head is head and
// whose tree is files.
func NewBaseline(gen uint64, head cas.ID, files map[string]cas.ID) *Baseline {
	return &Baseline{Baseline: pstate.Baseline{Generation: gen, Head: head, Files: files}}
}

// Exact is pstate.Baseline.Exact, true also of no baseline at all.
func (b *Baseline) Exact() bool { return b == nil || b.Baseline.Exact() }

// WithUnknown is b with an unknown base at each of paths (b itself, even
// nil, when paths is empty; b may be nil: a directory without a record).
func (b *Baseline) WithUnknown(paths []string) *Baseline {
	if len(paths) == 0 {
		return b
	}
	var rec *pstate.Baseline
	if b != nil {
		rec = &b.Baseline
	}
	return &Baseline{Baseline: plan.WithUnknown(rec, paths)}
}

// UnknownPaths lists the paths of b whose base is unknown.
func (b *Baseline) UnknownPaths() []string {
	if b.Exact() {
		return nil
	}
	return plan.UnknownPaths(&b.Baseline)
}

// HasUnknown reports whether any base of b is unknown.
func (b *Baseline) HasUnknown() bool { return b != nil && len(b.UnknownPaths()) > 0 }

// LearnIgnored records b's ignored set in the memory b came from, for the
// calls after this one.
func (b *Baseline) LearnIgnored(list []plan.PathID) {
	b.Ignored, b.IgnoredKnown = list, true
	if b.Kept != nil {
		b.Kept.b.Ignored, b.Kept.b.IgnoredKnown = list, true
	}
}

// IgnoredAfter is the ignored set of the baseline that is b with changes
// applied (each path's new ID, zero: removed), derived from b's without
// walking every path; ok is false when b's is not known.
func (b *Baseline) IgnoredAfter(changes map[string]cas.ID, match func(string) bool) (list []plan.PathID, ok bool) {
	if !b.IgnoredKnown {
		return nil, false
	}
	for _, e := range b.Ignored {
		if _, changed := changes[e.Path]; !changed {
			list = append(list, e)
		}
	}
	for p, id := range changes {
		if !id.IsZero() && match(p) {
			list = append(list, plan.PathID{Path: p, ID: id})
		}
	}
	return list, true
}

// SameMap reports whether a and b are one map (not merely equal ones).
func SameMap(a, b map[string]cas.ID) bool {
	if a == nil || b == nil {
		return false
	}
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}
