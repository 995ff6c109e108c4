package remote

import (
	"context"

	"github.com/slivingdoc/slivingdoc/cas"
)

// ExtendCarried is ExtendAt with the segments of the fold carried by the
// new increment, as Publish does when the pack holds them; it also
// returns the chunk objects that pack must hold (Carried).
func (m *Manifest) ExtendCarried(publication string, head cas.ID, pack PackRef, at uint64) (*Manifest, []cas.Object, error) {
	objs := m.Carried(publication)
	next, err := m.extendAt(publication, head, pack, at, true)
	return next, objs, err
}

var contextBackground = context.Background

// Test hooks.

// DecodeManifestV1 is the version-1 decoder: what a version-1 binary runs.
func DecodeManifestV1(data []byte) (*Manifest, error) { return decodeManifestV1(data) }

// Uploads returns the segments an operation on m created, by key.
func (m *Manifest) Uploads() map[string][]byte {
	out := map[string][]byte{}
	for _, s := range m.uploads {
		out[s.ref.Key()] = s.data
	}
	return out
}

// DowngradeToV1 returns the version-1 manifest of the same history (what
// a version-1 writer would have made), for tests of the v1 rules on
// stores built by this build's writers.
func DowngradeToV1(nb *Notebook, st State) (*Manifest, error) {
	chains, err := nb.Chains(contextBackground(), st)
	if err != nil {
		return nil, err
	}
	m := &Manifest{Version: 1, Generation: st.Manifest.Generation, Head: st.Manifest.Head,
		Checkpoint: chains[0].Checkpoint, Increments: chains[0].Increments}
	for _, c := range chains[1:] {
		c.Partial = false
		m.Retained = append(m.Retained, c)
	}
	return m, m.Validate()
}

// PlanItem is one catch-up step, for tests.
type PlanItem struct {
	Level       int
	First, Last uint64
}

// PlanCatchUpItems exposes PlanCatchUp.
func PlanCatchUpItems(m *Manifest, reach uint64) []PlanItem {
	var out []PlanItem
	for _, it := range planCatchUp(m, reach) {
		out = append(out, PlanItem{it.level, it.first, it.last})
	}
	return out
}

// PlanCatchUpItemsBefore exposes planCatchUpBefore.
func PlanCatchUpItemsBefore(m *Manifest, reach, fresh uint64) []PlanItem {
	var out []PlanItem
	for _, it := range planCatchUpBefore(m, reach, fresh) {
		out = append(out, PlanItem{it.level, it.first, it.last})
	}
	return out
}

// FreshFrom exposes freshFrom.
func (n *Notebook) FreshFrom(m *Manifest) uint64 { return n.freshFrom(m) }

// InsteadOf exposes coverItem.instead.
func InsteadOf(it PlanItem, reach uint64) []PlanItem {
	var out []PlanItem
	for _, c := range (coverItem{it.Level, it.First, it.Last}).instead(reach) {
		out = append(out, PlanItem{c.level, c.first, c.last})
	}
	return out
}
