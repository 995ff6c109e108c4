package remote

import (
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
)

func rollupReg(level int, first uint64) Registered {
	return Registered{Kind: EntryRollup, Rollup: RollupRef{Level: level, First: first,
		Sum: cas.Sum([]byte{byte(level), byte(first), byte(first >> 8)}), Size: 10}}
}

// TestAddRegisteredRules: the rules of docs/storage.md §3C.8 a fold
// applies to what it copies, and the LIST filter that spares it GETs.
func TestAddRegisteredRules(t *testing.T) {
	m, _ := buildV4(t, 200, 1)
	var regs []Registered
	for g := uint64(4); g <= 200; g += 4 {
		for _, l := range RollupsEndingAt(g) {
			if g > 1<<l { // no first blocks in version 4
				regs = append(regs, rollupReg(l, g-1<<l+1))
			}
		}
	}
	regs = append(regs, rollupReg(2, 201), rollupReg(3, 193)) // blocks not ended yet
	dup := rollupReg(2, 197)
	dup.Rollup.Sum = cas.Sum([]byte("another build of 197..200"))
	regs = append(regs, dup)
	took := m.AddRegistered(regs, nil)
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	perLevel := map[int]int{}
	for _, r := range m.Rollups {
		perLevel[r.Level]++
		if r.First+1<<r.Level-1 > m.Generation {
			t.Fatalf("block %d..%d past generation %d", r.First, r.First+1<<r.Level-1, m.Generation)
		}
		if r.Level == 2 && r.First == 197 && r.Sum == dup.Rollup.Sum {
			t.Fatal("a second descriptor of one block replaced the first")
		}
	}
	if perLevel[2] != MaxRollupsPerLevelV4 || perLevel[7] != 0 || perLevel[6] != 2 || took == 0 {
		t.Fatalf("levels %v, took %d", perLevel, took)
	}
	if m.Rollups[len(m.Rollups)-1].First != 197 {
		t.Fatalf("the newest level-2 block is %d", m.Rollups[len(m.Rollups)-1].First)
	}
	// The LIST filter: what m holds or dropped is not read again; a block
	// it could take is.
	var keys []string
	for _, r := range regs {
		k, _, _ := EncodeRegistered(r)
		keys = append(keys, k)
	}
	want := m.WantsRegistered(keys)
	for _, k := range want {
		if kind, g, _, _, _ := ParseProposalEntry(k); kind != EntryRollup || g <= 200 && g != 204 {
			t.Errorf("wants %s again", k)
		}
	}
	// A checkpoint through a tail generation becomes the active one, and
	// the rollups it covers leave `current`.
	inc := m.Increments[len(m.Increments)-3]
	pub := v4id(900001)
	cp := Registered{Kind: EntryCheckpoint, Checkpoint: Checkpoint{Pack: PackRef{Key: CheckpointKey(inc.Generation, pub),
		Sum: cas.Sum([]byte("cp")), Size: 10}, Head: inc.Head, Through: inc.Generation, Publication: pub}}
	wrong := cp
	wrong.Checkpoint.Head = v4head(3)
	wrong.Checkpoint.Publication = v4id(900002)
	wrong.Checkpoint.Pack.Key = CheckpointKey(inc.Generation, wrong.Checkpoint.Publication)
	if n := m.AddRegistered([]Registered{wrong}, nil); n != 0 {
		t.Fatal("a checkpoint whose head is not its through's was taken")
	}
	if n := m.AddRegistered([]Registered{cp}, nil); n != 1 || m.Checkpoint != cp.Checkpoint {
		t.Fatalf("took %d, active %+v", n, m.Checkpoint)
	}
	for _, r := range m.Rollups {
		if r.First <= cp.Checkpoint.Through {
			t.Fatalf("rollup %d..%d kept below the checkpoint", r.First, r.First+1<<r.Level-1)
		}
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	// Below the tail the fold supplies the head (it reads the segments).
	old := m.Increments[0].Generation - 5
	pub = v4id(900003)
	below := Registered{Kind: EntryCheckpoint, Checkpoint: Checkpoint{Pack: PackRef{Key: CheckpointKey(old, pub),
		Sum: cas.Sum([]byte("cp2")), Size: 10}, Head: v4head(int(old)), Through: old, Publication: pub}}
	if n := m.AddRegistered([]Registered{below}, nil); n != 0 {
		t.Fatal("a checkpoint below the tail was taken without its head")
	}
	m2, _ := buildV4(t, 200, 1)
	headAt := func(g uint64) (cas.ID, bool) { return v4head(int(g)), true }
	if n := m2.AddRegistered([]Registered{below}, headAt); n != 1 || m2.Checkpoint.Through != old {
		t.Fatalf("took %d below the tail", n)
	}
}
