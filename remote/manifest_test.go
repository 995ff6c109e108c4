package remote_test

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/remote"
)

// id returns a deterministic non-zero ID for name.
func id(name string) cas.ID { return cas.Sum([]byte(name)) }

// pubs are fixed, valid UUIDv7 publication IDs for reproducible manifests.
var pubs = []string{
	"01936f2a-0000-7000-8000-000000000001",
	"01936f2a-0000-7000-8000-000000000002",
	"01936f2a-0000-7000-8000-000000000003",
	"01936f2a-0000-7000-8000-000000000004",
	"01936f2a-0000-7000-8000-000000000005",
	"01936f2a-0000-7000-8000-000000000006",
	"01936f2a-0000-7000-8000-000000000007",
}

func incRef(gen uint64, pub string) remote.PackRef {
	return remote.PackRef{Key: remote.IncrementKey(gen, pub), Sum: id("pack " + pub), Size: 1000 + int64(gen)}
}

func inc(gen uint64, pub string, parent, head cas.ID) remote.Increment {
	return remote.Increment{Generation: gen, Publication: pub, Parent: parent, Head: head, Pack: incRef(gen, pub)}
}

// linear builds the manifest of n publications on an empty notebook.
func linear(t *testing.T, n int) *remote.Manifest {
	t.Helper()
	var m *remote.Manifest
	for i := range n {
		var err error
		m, err = m.Extend(pubs[i], id("head "+pubs[i]), incRef(uint64(i+1), pubs[i]))
		if err != nil {
			t.Fatalf("Extend %d: %v", i, err)
		}
	}
	return m
}

// linearV1 is the version-1 manifest of n publications on an empty
// notebook, as a version-1 binary wrote it.
func linearV1(n int) *remote.Manifest {
	m := &remote.Manifest{Version: 1}
	var parent cas.ID
	for i := range n {
		head := id("head " + pubs[i])
		m.Increments = append(m.Increments, inc(uint64(i+1), pubs[i], parent, head))
		parent = head
	}
	m.Generation, m.Head = uint64(n), parent
	return m
}

// checkpointed is a manifest whose active checkpoint covers generations 1-2
// (written at generation 3), with increments 4 and 5 active and the old
// chain (genesis + 1, 2) retained.
func checkpointed() *remote.Manifest {
	h1, h2, h4, h5 := id("h1"), id("h2"), id("h4"), id("h5")
	return &remote.Manifest{
		Version:    1,
		Generation: 5,
		Head:       h5,
		Checkpoint: remote.Checkpoint{
			Pack:        remote.PackRef{Key: remote.CheckpointKey(2, pubs[2]), Sum: id("cp"), Size: 5000},
			Head:        h2,
			Through:     2,
			Publication: pubs[2],
		},
		Increments: []remote.Increment{inc(4, pubs[3], h2, h4), inc(5, pubs[4], h4, h5)},
		Retained: []remote.Chain{{
			Increments: []remote.Increment{inc(1, pubs[0], cas.ID{}, h1), inc(2, pubs[1], h1, h2)},
		}},
	}
}

func TestManifestExtendAndPacks(t *testing.T) {
	m := linear(t, 3)
	if m.Generation != 3 || m.Head != id("head "+pubs[2]) {
		t.Fatalf("generation %d head %v after three publications", m.Generation, m.Head)
	}
	var keys []string
	for _, p := range m.Packs() {
		keys = append(keys, p.Key)
	}
	want := []string{remote.IncrementKey(1, pubs[0]), remote.IncrementKey(2, pubs[1]), remote.IncrementKey(3, pubs[2])}
	if !slices.Equal(keys, want) {
		t.Fatalf("Packs() = %v, want %v", keys, want)
	}
	if m.Increments[0].Parent != (cas.ID{}) || m.Increments[1].Parent != m.Increments[0].Head {
		t.Fatal("Extend did not chain parents to the previous head")
	}
	// Extend never modifies its receiver.
	longer, err := m.Extend(pubs[3], id("x"), incRef(4, pubs[3]))
	if err != nil || len(m.Increments) != 3 || len(longer.Increments) != 4 {
		t.Fatalf("Extend modified its receiver or failed: %v", err)
	}
}

func TestManifestCheckpointedChains(t *testing.T) {
	m := checkpointed()
	if err := m.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	var keys []string
	for _, p := range m.Packs() {
		keys = append(keys, p.Key)
	}
	want := []string{remote.CheckpointKey(2, pubs[2]), remote.IncrementKey(4, pubs[3]), remote.IncrementKey(5, pubs[4])}
	if !slices.Equal(keys, want) {
		t.Fatalf("Packs() = %v, want checkpoint first then increments %v", keys, want)
	}
	if heads := m.Heads(); !slices.Equal(heads, []cas.ID{id("h5"), id("h2")}) {
		t.Fatalf("Heads() = %v, want the active head then the retained head", heads)
	}
	if ref := m.Referenced(); len(ref) != 5 {
		t.Fatalf("Referenced() has %d packs, want 5 (checkpoint, 2 active, 2 retained)", len(ref))
	}
	if inc, ok := m.FindPublication(pubs[0]); !ok || inc.Generation != 1 {
		t.Fatal("FindPublication does not search retained chains")
	}
	if _, ok := m.FindPublication(pubs[6]); ok {
		t.Fatal("FindPublication found an unknown publication")
	}
}

func TestManifestValidateRefuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(m *remote.Manifest)
	}{
		{"generation zero", func(m *remote.Manifest) { m.Generation = 0 }},
		{"generation below the last increment", func(m *remote.Manifest) { m.Generation = 4 }},
		{"zero head", func(m *remote.Manifest) { m.Head = cas.ID{} }},
		{"head not reached by the chain", func(m *remote.Manifest) { m.Head = id("elsewhere") }},
		{"broken parent link", func(m *remote.Manifest) { m.Increments[1].Parent = id("other") }},
		{"first parent is not the checkpoint head", func(m *remote.Manifest) { m.Increments[0].Parent = id("h1") }},
		{"generations out of order", func(m *remote.Manifest) {
			m.Increments[0].Generation, m.Increments[1].Generation = 5, 4
			m.Increments[0].Pack.Key, m.Increments[1].Pack.Key = remote.IncrementKey(5, pubs[3]), remote.IncrementKey(4, pubs[4])
		}},
		{"increment at or below the checkpoint", func(m *remote.Manifest) {
			m.Increments[0].Generation, m.Increments[0].Pack.Key = 2, remote.IncrementKey(2, pubs[3])
		}},
		{"pack key not derived", func(m *remote.Manifest) { m.Increments[0].Pack.Key = "packs/increments/x.pack" }},
		{"pack key pointing at current", func(m *remote.Manifest) { m.Increments[0].Pack.Key = "current" }},
		{"zero pack size", func(m *remote.Manifest) { m.Increments[0].Pack.Size = 0 }},
		{"negative pack size", func(m *remote.Manifest) { m.Increments[0].Pack.Size = -1 }},
		{"huge pack size", func(m *remote.Manifest) { m.Increments[0].Pack.Size = remote.MaxPackSize + 1 }},
		{"zero pack checksum", func(m *remote.Manifest) { m.Increments[0].Pack.Sum = cas.ID{} }},
		{"publication not a UUIDv7", func(m *remote.Manifest) {
			p := "01936f2a-0000-4000-8000-000000000004" // version 4
			m.Increments[0].Publication, m.Increments[0].Pack.Key = p, remote.IncrementKey(4, p)
		}},
		{"duplicate publication", func(m *remote.Manifest) {
			m.Increments[1].Publication, m.Increments[1].Pack.Key = pubs[0], remote.IncrementKey(5, pubs[0])
		}},
		{"head equals parent", func(m *remote.Manifest) { m.Increments[1].Head = m.Increments[1].Parent; m.Head = m.Increments[1].Head }},
		{"checkpoint without publication", func(m *remote.Manifest) { m.Checkpoint.Publication = "" }},
		{"checkpoint key not derived", func(m *remote.Manifest) { m.Checkpoint.Pack.Key = remote.CheckpointKey(3, pubs[2]) }},
		{"checkpoint through zero", func(m *remote.Manifest) { m.Checkpoint.Through = 0 }},
		{"half-empty genesis", func(m *remote.Manifest) { m.Retained[0].Checkpoint.Through = 1 }},
		{"retained chain not reaching the checkpoint head", func(m *remote.Manifest) {
			m.Checkpoint.Head = id("h1")
			m.Increments[0].Parent = id("h1")
		}},
		{"retained chain reaching another generation", func(m *remote.Manifest) {
			m.Checkpoint.Through, m.Checkpoint.Pack.Key = 3, remote.CheckpointKey(3, pubs[2])
		}},
		{"retained chains without a checkpoint", func(m *remote.Manifest) {
			m.Checkpoint = remote.Checkpoint{}
			m.Increments[0].Parent = cas.ID{}
		}},
		{"empty retained chain", func(m *remote.Manifest) { m.Retained[0] = remote.Chain{} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := checkpointed()
			tc.mutate(m)
			err := m.Validate()
			if !errors.Is(err, remote.ErrCorruptManifest) || !errors.Is(err, remote.ErrIntegrity) {
				t.Fatalf("Validate = %v, want ErrCorruptManifest (an integrity error)", err)
			}
			if _, err := remote.EncodeManifest(m); !errors.Is(err, remote.ErrCorruptManifest) {
				t.Fatalf("EncodeManifest wrote an invalid manifest: %v", err)
			}
		})
	}
}

func TestGenerationOverflowRefused(t *testing.T) {
	if g, err := remote.NextGeneration(41); g != 42 || err != nil {
		t.Fatalf("NextGeneration(41) = %d, %v", g, err)
	}
	if _, err := remote.NextGeneration(math.MaxUint64); !errors.Is(err, remote.ErrGenerationOverflow) {
		t.Fatalf("NextGeneration(max) = %v, want ErrGenerationOverflow", err)
	}
	m := linear(t, 1)
	m.Generation = math.MaxUint64
	if _, err := m.Extend(pubs[1], id("next"), incRef(0, pubs[1])); !errors.Is(err, remote.ErrGenerationOverflow) {
		t.Fatalf("Extend at the maximum generation = %v, want ErrGenerationOverflow", err)
	}
}

func TestManifestSwapCheckpoint(t *testing.T) {
	m := linearV1(5) // the version-1 rules; TestManifestV2SwapCheckpoint has version 2's
	cpAt := func(m *remote.Manifest, gen uint64, pub string) remote.Checkpoint {
		inc, _ := m.FindPublication(pubs[gen-1])
		return remote.Checkpoint{Pack: remote.PackRef{Key: remote.CheckpointKey(gen, pub), Sum: id("cp " + pub), Size: 9000},
			Head: inc.Head, Through: gen, Publication: pub}
	}
	one, err := m.SwapCheckpoint(cpAt(m, 3, pubs[5]), 1)
	if err != nil {
		t.Fatal(err)
	}
	if one.Generation != 6 || one.Head != m.Head || len(one.Increments) != 2 || len(one.Retained) != 1 || len(one.Retained[0].Increments) != 3 {
		t.Fatalf("after a checkpoint through 3: gen %d, %d active, %d retained", one.Generation, len(one.Increments), len(one.Retained))
	}
	if one.Increments[0].Parent != one.Checkpoint.Head {
		t.Fatal("the first active increment does not build on the checkpoint")
	}
	// A second checkpoint with retention 1 keeps only the newest chain.
	two, err := one.SwapCheckpoint(cpAt(one, 4, pubs[6]), 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(two.Retained) != 1 || two.Retained[0].Checkpoint != one.Checkpoint {
		t.Fatalf("retained after two checkpoints: %+v", two.Retained)
	}
	if _, ok := two.FindPublication(pubs[0]); ok {
		t.Fatal("a chain beyond the retention is still referenced")
	}
	if _, err := remote.DecodeManifest(mustEncode(t, two)); err != nil {
		t.Fatalf("a swapped manifest does not round-trip: %v", err)
	}
	// Retention 0 drops the replaced chain.
	zero, err := m.SwapCheckpoint(cpAt(m, 3, pubs[5]), 0)
	if err != nil || len(zero.Retained) != 0 {
		t.Fatalf("retention 0: %v retained, %v", zero.Retained, err)
	}
	// A checkpoint that is not a prefix of the active chain is refused.
	bad := cpAt(m, 3, pubs[5])
	bad.Head = id("elsewhere")
	if _, err := m.SwapCheckpoint(bad, 1); !errors.Is(err, remote.ErrCorruptManifest) {
		t.Fatalf("SwapCheckpoint off the chain = %v", err)
	}
}

func mustEncode(t *testing.T, m *remote.Manifest) []byte {
	t.Helper()
	data, err := remote.EncodeManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
