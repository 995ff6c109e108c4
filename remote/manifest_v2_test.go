package remote_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

// pubN is a valid, distinct UUIDv7 for publication number i.
func pubN(i int) string { return fmt.Sprintf("01936f2a-0000-7000-8000-%012d", i) }

// upgradedV2 is checkpointed() (version 1, one retained chain) after one
// more publication by a version-2 writer.
func upgradedV2(t testing.TB) *remote.Manifest {
	t.Helper()
	m, err := checkpointed().ExtendAt(pubs[5], id("h6"), incRef(6, pubs[5]), 1764000000000)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// grow extends m by n publications, putting the segments each fold
// creates into store, and returns the manifests after 1, 10, 100, ...
// publications.
func grow(t testing.TB, store remote.Store, m *remote.Manifest, from, n int) *remote.Manifest {
	t.Helper()
	for i := from; i < from+n; i++ {
		g := uint64(i + 1)
		next, err := m.ExtendAt(pubN(i), id(fmt.Sprint("head ", i)), incRef(g, pubN(i)), 1764000000000+g)
		if err != nil {
			t.Fatalf("ExtendAt %d: %v", i, err)
		}
		for k, data := range next.Uploads() {
			if err := store.Put(context.Background(), k, data); err != nil {
				t.Fatal(err)
			}
		}
		m = next
	}
	return m
}

// `current` stays under 16 KiB at any history length (issue 17: after 1,
// 1,000, 10,000 and 100,000 increments), and every one of them is still
// listed by Publications through the segments.
func TestManifestV2SizeIsBounded(t *testing.T) {
	store := memstore.New()
	var m *remote.Manifest
	done := 0
	for _, n := range []int{1, 1000, 10000, 100000} {
		m = grow(t, store, m, done, n-done)
		done = n
		enc, err := remote.EncodeManifest(m)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("current after %d increments: %d bytes, %d segments, %d in the tail", n, len(enc), len(m.Segments), len(m.Increments))
		if len(enc) > 16<<10 {
			t.Fatalf("current is %d bytes after %d increments, more than 16 KiB", len(enc), n)
		}
		dec, err := remote.DecodeManifest(enc)
		if err != nil {
			t.Fatalf("the encoded manifest does not decode: %v", err)
		}
		if dec.Generation != uint64(n) || dec.Head != m.Head {
			t.Fatalf("decoded generation %d, want %d", dec.Generation, n)
		}
	}
	nb := remote.Open(store, remote.Options{})
	st := remote.State{Manifest: m}
	for _, r := range [][2]uint64{{1, 1}, {1, 40}, {99990, 100000}, {4095, 4098}, {50000, 50100}} {
		incs, err := nb.Publications(context.Background(), st, r[0], r[1])
		if err != nil {
			t.Fatal(err)
		}
		if uint64(len(incs)) != r[1]-r[0]+1 {
			t.Fatalf("Publications(%d, %d) listed %d", r[0], r[1], len(incs))
		}
		for i, inc := range incs {
			g := r[0] + uint64(i)
			if inc.Generation != g || inc.Publication != pubN(int(g-1)) || inc.Pack.Key != remote.IncrementKey(g, pubN(int(g-1))) {
				t.Fatalf("Publications(%d, %d)[%d] = generation %d %s", r[0], r[1], i, inc.Generation, inc.Publication)
			}
			if g > 1 && inc.Parent != id(fmt.Sprint("head ", g-2)) {
				t.Fatalf("generation %d: parent is not the previous head", g)
			}
		}
	}
}

// A v1 manifest is upgraded by the first v2 publication: its increments
// (retained chains included) move into segments or the tail, its retained
// chains' checkpoints are kept, and history still lists every publication.
func TestManifestV1UpgradeKeepsHistory(t *testing.T) {
	m := upgradedV2(t)
	if m.Version != 2 || m.Upgraded != 6 || m.Generation != 6 || len(m.Checkpoints) != 0 {
		t.Fatalf("upgraded: version %d, upgraded %d, generation %d, %d retained checkpoints", m.Version, m.Upgraded, m.Generation, len(m.Checkpoints))
	}
	nb := remote.Open(memstore.New(), remote.Options{})
	incs, err := nb.Publications(context.Background(), remote.State{Manifest: m}, 1, 6)
	if err != nil {
		t.Fatal(err)
	}
	var gens []uint64
	for _, inc := range incs {
		gens = append(gens, inc.Generation)
	}
	if fmt.Sprint(gens) != "[1 2 4 5 6]" {
		t.Fatalf("history after the upgrade: %v", gens)
	}
	// A long v1 chain folds into segments at once.
	long := linearV1(0)
	var parent cas.ID
	for i := range 1000 {
		h := id(fmt.Sprint("v1 ", i))
		long.Increments = append(long.Increments, remote.Increment{Generation: uint64(i + 1), Publication: pubN(i), Parent: parent, Head: h, Pack: incRef(uint64(i+1), pubN(i))})
		parent = h
	}
	long.Generation, long.Head = 1000, parent
	up, err := long.ExtendAt(pubN(1000), id("v2"), incRef(1001, pubN(1000)), 1)
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := remote.EncodeManifest(up)
	if len(enc) > 16<<10 || len(up.Uploads()) == 0 {
		t.Fatalf("upgrading 1,000 v1 increments: %d bytes, %d segments written", len(enc), len(up.Uploads()))
	}
}

// A version-1 binary meeting a version-2 `current` refuses it, naming the
// version (the v1 decoder is kept as it shipped).
func TestV1DecoderRefusesV2NamingTheVersion(t *testing.T) {
	enc, err := remote.EncodeManifest(upgradedV2(t))
	if err != nil {
		t.Fatal(err)
	}
	_, err = remote.DecodeManifestV1(enc)
	if err == nil || !strings.Contains(err.Error(), "version 2 is not supported by this build (reads version 1)") {
		t.Fatalf("the v1 decoder on a v2 manifest: %v", err)
	}
	if _, err := remote.DecodeManifest(enc); err != nil {
		t.Fatalf("the v2 decoder: %v", err)
	}
}

func TestManifestV2DecodeStrict(t *testing.T) {
	store := memstore.New()
	m := grow(t, store, nil, 0, 40)
	golden, err := remote.EncodeManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	g := string(golden)
	for _, tc := range []struct{ name, data string }{
		{"unknown field", strings.Replace(g, `{"version":2,`, `{"version":2,"extra":0,`, 1)},
		{"missing segments", strings.Replace(g, `"segments":[`, `"x":[`, 1)},
		{"key in an increment", strings.Replace(g, `"time":`, `"key":"k","time":`, 1)},
		{"upgraded 0", strings.Replace(g, `"upgraded":1,`, `"upgraded":0,`, 1)},
		{"segment level 0", strings.Replace(g, `{"level":`+fmt.Sprint(m.Segments[0].Level), `{"level":0`, 1)},
		{"version 3", strings.Replace(g, `"version":2`, `"version":3`, 1)},
		{"generation below the tail", strings.Replace(g, `"generation":40,`, `"generation":39,`, 1)},
		{"trailing data", g + "{}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.data == g {
				t.Fatal("the mutation did not apply; fix the test")
			}
			if _, err := remote.DecodeManifest([]byte(tc.data)); !errors.Is(err, remote.ErrCorruptManifest) {
				t.Fatalf("DecodeManifest = %v; want ErrCorruptManifest", err)
			}
		})
	}
	// A damaged segment is refused by its checksum before it is parsed.
	nb := remote.Open(store, remote.Options{})
	key := m.Segments[0].Key()
	if err := store.Put(context.Background(), key, []byte(`{"version":2}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := nb.Publications(context.Background(), remote.State{Manifest: m}, 1, 2); !errors.Is(err, remote.ErrCorruptPack) {
		t.Fatalf("a damaged segment: %v", err)
	}
}

// A v2 checkpoint swap keeps head and history, makes the old checkpoint
// the newest retained one, and drops history segments only below the
// oldest kept checkpoint.
func TestManifestV2SwapCheckpoint(t *testing.T) {
	store := memstore.New()
	m := grow(t, store, nil, 0, 100)
	cp := func(through uint64, pub string) remote.Checkpoint {
		return remote.Checkpoint{Pack: remote.PackRef{Key: remote.CheckpointKey(through, pub), Sum: id("cp " + pub), Size: 9000},
			Head: id(fmt.Sprint("head ", through-1)), Through: through, Publication: pub}
	}
	one, err := m.SwapCheckpoint(cp(100, pubs[0]), 1)
	if err != nil {
		t.Fatal(err)
	}
	if one.Generation != 101 || one.Head != m.Head || len(one.Checkpoints) != 0 || len(one.Segments) != len(m.Segments) {
		t.Fatalf("after the first checkpoint: generation %d, %d retained, %d segments", one.Generation, len(one.Checkpoints), len(one.Segments))
	}
	two := grow(t, store, one, 101, 50)
	two, err = two.SwapCheckpoint(cp(151, pubs[1]), 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(two.Checkpoints) != 1 || two.Checkpoints[0] != one.Checkpoint || two.Oldest() > 101 {
		t.Fatalf("after the second: %d retained, history from %d", len(two.Checkpoints), two.Oldest())
	}
	if _, err := remote.DecodeManifest(mustEncode(t, two)); err != nil {
		t.Fatal(err)
	}
	// A checkpoint whose head is not its generation's is refused while
	// that generation is in the tail.
	bad := cp(151, pubs[2])
	bad.Head = id("elsewhere")
	if _, err := grow(t, store, two, 152, 1).SwapCheckpoint(bad, 1); !errors.Is(err, remote.ErrCorruptManifest) {
		t.Fatalf("a checkpoint off the history: %v", err)
	}
}
