package remote_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
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

// grow extends m by n publications as this build's Publish does: the
// segments a fold creates are carried by the folding publication, whose
// pack (holding only them here) goes into store. It returns m after the
// last one.
func grow(t testing.TB, store remote.Store, m *remote.Manifest, from, n int) *remote.Manifest {
	t.Helper()
	for i := from; i < from+n; i++ {
		g := uint64(i + 1)
		next, objs, err := m.ExtendCarried(pubN(i), id(fmt.Sprint("head ", i)), incRef(g, pubN(i)), 1764000000000+g)
		if err != nil {
			t.Fatalf("ExtendCarried %d: %v", i, err)
		}
		if len(objs) > 0 {
			w := cas.NewPackWriter()
			for _, o := range objs {
				if err := w.Put(o); err != nil {
					t.Fatal(err)
				}
			}
			pack, err := w.Finish()
			if err != nil {
				t.Fatal(err)
			}
			if err := store.Put(context.Background(), remote.IncrementKey(g, pubN(i)), pack); err != nil {
				t.Fatal(err)
			}
		}
		m = next
	}
	return m
}

// growOwn is grow as format 2 wrote (and a publisher whose pack does not
// carry the segments still writes): each segment an object of its own.
func growOwn(t testing.TB, store remote.Store, m *remote.Manifest, from, n int) *remote.Manifest {
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
	if m.Version != remote.ManifestVersion || m.Upgraded != 6 || m.Generation != 6 || len(m.Checkpoints) != 0 {
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

// A version-1 binary meeting a version-2 or version-3 `current` refuses
// it, naming the version (the v1 decoder is kept as it shipped).
func TestV1DecoderRefusesV2NamingTheVersion(t *testing.T) {
	for _, version := range []int{2, 3} {
		m := upgradedV2(t)
		m.Version = version
		enc, err := remote.EncodeManifest(m)
		if err != nil {
			t.Fatal(err)
		}
		_, err = remote.DecodeManifestV1(enc)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("version %d is not supported by this build (reads version 1)", version)) {
			t.Fatalf("the v1 decoder on a v%d manifest: %v", version, err)
		}
		if dec, err := remote.DecodeManifest(enc); err != nil || dec.Version != version {
			t.Fatalf("this build's decoder on version %d: %v", version, err)
		}
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
	carried := `"carrier":` + fmt.Sprint(m.Segments[0].Carrier) + `,"publication":"` + m.Segments[0].CarrierPub + `"`
	if !m.Segments[0].Carried() || !strings.Contains(g, carried) {
		t.Fatalf("the first segment is not carried: %+v", m.Segments[0])
	}
	for _, tc := range []struct{ name, data string }{
		{"unknown field", strings.Replace(g, `{"version":3,`, `{"version":3,"extra":0,`, 1)},
		{"carried segment in version 2", strings.Replace(g, `{"version":3,`, `{"version":2,`, 1)},
		{"carrier without publication", strings.Replace(g, carried, `"carrier":`+fmt.Sprint(m.Segments[0].Carrier), 1)},
		{"publication without carrier", strings.Replace(g, carried, `"publication":"`+m.Segments[0].CarrierPub+`"`, 1)},
		{"carrier 0", strings.Replace(g, carried, `"carrier":0,"publication":"`+m.Segments[0].CarrierPub+`"`, 1)},
		{"carrier inside its range", strings.Replace(g, carried, `"carrier":1,"publication":"`+m.Segments[0].CarrierPub+`"`, 1)},
		{"carrier beyond the generation", strings.Replace(g, carried, `"carrier":41,"publication":"`+m.Segments[0].CarrierPub+`"`, 1)},
		{"carrier publication not a UUIDv7", strings.Replace(g, carried, `"carrier":`+fmt.Sprint(m.Segments[0].Carrier)+`,"publication":"x"`, 1)},
		{"missing segments", strings.Replace(g, `"segments":[`, `"x":[`, 1)},
		{"key in an increment", strings.Replace(g, `"time":`, `"key":"k","time":`, 1)},
		{"upgraded 0", strings.Replace(g, `"upgraded":1,`, `"upgraded":0,`, 1)},
		{"segment level 0", strings.Replace(g, `{"level":`+fmt.Sprint(m.Segments[0].Level), `{"level":0`, 1)},
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

// A publication whose pack is larger than MaxCarrierPack does not carry
// the segments its fold creates: they are uploaded on their own, so later
// history reads never download a large pack for a 2.7 KiB segment.
func TestLargePacksDoNotCarrySegments(t *testing.T) {
	ctx := context.Background()
	m := memstore.New()
	w := newTreeWriter(m)
	w.carry = true
	w.commitN(t, 15)
	big := make([]byte, remote.MaxCarrierPack+(64<<10))
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range big {
		big[i] = byte(rng.Uint32()) // incompressible
	}
	acc, err := w.commit(ctx, "big", func(f map[string][]byte) { f["big.bin"] = big })
	if err != nil {
		t.Fatal(err)
	}
	segs := acc.State.Manifest.Segments
	if acc.State.Generation() != 16 || len(segs) != 1 || segs[0].Carried() || !strings.HasPrefix(segs[0].Key(), remote.SegmentsPrefix) {
		t.Fatalf("after a large folding publication: generation %d, segments %+v", acc.State.Generation(), segs)
	}
	w.commitN(t, 8) // the next fold is carried again
	cur, err := w.nb.ReadCurrent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(cur.Manifest.Segments); n != 2 || !cur.Manifest.Segments[1].Carried() {
		t.Fatalf("segments after the next fold: %+v", cur.Manifest.Segments)
	}
	mustVerify(t, m)
}

// A history whose older segments are objects of their own (format 2, or a
// publisher that did not carry) and whose newer ones are carried reads as
// one: Publications lists every generation across both forms.
func TestMixedSegmentFormsReadAsOne(t *testing.T) {
	store := memstore.New()
	m := growOwn(t, store, nil, 0, 40)
	m = grow(t, store, m, 40, 20) // 60: still below the first level-2 fold (72)
	own, carried := 0, 0
	for _, s := range m.Segments {
		if s.Carried() {
			carried++
		} else {
			own++
		}
	}
	if own == 0 || carried == 0 {
		t.Fatalf("segments %+v: want both forms", m.Segments)
	}
	dec, err := remote.DecodeManifest(mustEncode(t, m))
	if err != nil {
		t.Fatal(err)
	}
	incs, err := remote.Open(store, remote.Options{}).Publications(context.Background(), remote.State{Manifest: dec}, 1, 60)
	if err != nil || len(incs) != 60 {
		t.Fatalf("Publications over both forms: %d, %v", len(incs), err)
	}
	for i, inc := range incs {
		if inc.Generation != uint64(i+1) {
			t.Fatalf("entry %d is generation %d", i, inc.Generation)
		}
	}
}

// This build meeting a `current` newer than it reads (a store a later
// slivingdoc wrote) refuses it naming the version, as ErrFormatNewer,
// not as a corrupt manifest: the store is whole, the binary is old.
func TestDecoderRefusesANewerFormatNamingTheVersion(t *testing.T) {
	for _, version := range []int{4, 5, 99} {
		m := upgradedV2(t)
		m.Version = 3
		enc, err := remote.EncodeManifest(m)
		if err != nil {
			t.Fatal(err)
		}
		enc = []byte(strings.Replace(string(enc), `{"version":3,`, fmt.Sprintf(`{"version":%d,`, version), 1))
		_, err = remote.DecodeManifest(enc)
		var fv *remote.FormatVersionError
		if !errors.Is(err, remote.ErrFormatNewer) || errors.Is(err, remote.ErrCorruptManifest) || !errors.As(err, &fv) || fv.Version != uint64(version) {
			t.Fatalf("version %d: %v", version, err)
		}
		if want := fmt.Sprintf("format version %d is not supported by this build (reads versions 1 to 3)", version); !strings.Contains(err.Error(), want) {
			t.Fatalf("version %d: message %q, want %q", version, err, want)
		}
	}
}
