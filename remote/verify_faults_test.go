package remote_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

// Each test injects one fault into a healthy, checkpointed store and
// expects verify to name it (by code and key) and call the store damaged.

// verifiedStore has a checkpoint, a retained chain and two active
// increments, and verifies clean.
func verifiedStore(t *testing.T) (*memstore.Mem, *remote.Manifest) {
	t.Helper()
	m := memstore.New()
	w := newTreeWriter(m)
	w.commitN(t, 4)
	if _, err := w.nb.Checkpoint(context.Background(), remote.CheckpointOptions{Retained: 1}); err != nil {
		t.Fatal(err)
	}
	w.commitN(t, 2)
	mustVerify(t, m)
	cur, err := w.nb.ReadCurrent(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// These tests tamper with a version-1 `current` (the v1 rules stay
	// verified for as long as v1 stores exist): the same history as v1.
	v1, err := remote.DowngradeToV1(w.nb, cur)
	if err != nil {
		t.Fatal(err)
	}
	data, err := remote.EncodeManifest(v1)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Put(context.Background(), remote.CurrentKey, data); err != nil {
		t.Fatal(err)
	}
	mustVerify(t, m)
	return m, v1
}

func verifyFinds(t *testing.T, store remote.Store, code, key string) *remote.Report {
	t.Helper()
	rep, err := remote.Verify(context.Background(), store, remote.VerifyOptions{})
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if rep.OK() {
		t.Fatalf("Verify found the store whole; want %s", code)
	}
	for _, f := range rep.Findings {
		if f.Code == code && (key == "" || f.Key == key) {
			return rep
		}
	}
	t.Fatalf("findings %+v lack %s on %q", rep.Findings, code, key)
	return nil
}

func TestVerifyDetectsFlippedByte(t *testing.T) {
	m, mf := verifiedStore(t)
	key := mf.Checkpoint.Pack.Key
	data := mustGet(t, m, key)
	data[len(data)/2] ^= 0x01
	if err := m.Put(context.Background(), key, data); err != nil {
		t.Fatal(err)
	}
	verifyFinds(t, m, remote.FindingPackChecksum, key)
}

func TestVerifyDetectsTruncatedPack(t *testing.T) {
	m, mf := verifiedStore(t)
	key := mf.Increments[1].Pack.Key
	data := mustGet(t, m, key)
	if err := m.Put(context.Background(), key, data[:len(data)-7]); err != nil {
		t.Fatal(err)
	}
	verifyFinds(t, m, remote.FindingPackSize, key)
}

func TestVerifyDetectsMissingPack(t *testing.T) {
	m, mf := verifiedStore(t)
	key := mf.Retained[0].Increments[2].Pack.Key // a retained chain is checked too
	if err := m.Delete(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	rep := verifyFinds(t, m, remote.FindingPackMissing, key)
	if rep.Findings[0].Chain != "retained 1" {
		t.Fatalf("the missing pack is reported in chain %q", rep.Findings[0].Chain)
	}
}

// A pack whose object is damaged but which the manifest describes
// faithfully (size and checksum of the damaged bytes): the object's ID
// check catches it.
func TestVerifyDetectsObjectNotMatchingItsID(t *testing.T) {
	m := memstore.New()
	w := newTreeWriter(m)
	w.commitN(t, 1)
	nb := remote.Open(m, remote.Options{})
	// A second increment whose pack carries a chunk object whose bytes
	// were altered after its ID was computed, resealed with a valid trailer.
	var damaged []byte
	var raw []byte // incompressible, so it is stored as is
	for i := range 4 {
		sum := cas.Sum([]byte{byte(i)})
		raw = append(raw, sum[:]...)
	}
	_, err := nb.Publish(context.Background(), func(ctx context.Context, observed remote.State, pub string) (remote.Proposal, error) {
		chunk, err := cas.ChunkObject(raw)
		if err != nil {
			return remote.Proposal{}, err
		}
		commit := cas.EncodeCommit(cas.Commit{Tree: cas.Sum([]byte("t")), Parent: observed.Head(), Publication: pub, Message: []byte("m")})
		pw := cas.NewPackWriter()
		_ = pw.Put(chunk)
		_ = pw.Put(commit)
		pack, _ := pw.Finish()
		i := bytes.Index(pack, raw)
		pack[i] ^= 0xff
		sum := cas.Sum(pack[:len(pack)-32])
		copy(pack[len(pack)-32:], sum[:])
		damaged = pack
		return remote.Proposal{Pack: pack, Head: commit.ID}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	after, _ := nb.ReadCurrent(context.Background())
	key := after.Manifest.Increments[1].Pack.Key
	if !bytes.Equal(mustGet(t, m, key), damaged) {
		t.Fatal("the damaged pack was not stored as built")
	}
	verifyFinds(t, m, remote.FindingPackCorrupt, key)
}

// An increment whose tree names a file no pack holds: every pack is
// sound, but the head does not read completely.
func TestVerifyDetectsObjectMissingFromClosure(t *testing.T) {
	m := memstore.New()
	w := newTreeWriter(m)
	w.commitN(t, 3)
	lost := []byte("content whose objects never reach the store\n")
	mem := cas.NewObjectSet()
	if _, err := cas.WriteFile(mem, lost); err != nil {
		t.Fatal(err)
	}
	skip := map[cas.ID]bool{}
	for _, id := range mem.IDs() {
		skip[id] = true
	}
	w.skipHave = func(id cas.ID) bool { return skip[id] }
	w.mustCommit(t, "lost.md", string(lost))
	rep := verifyFinds(t, m, remote.FindingClosure, "")
	if rep.Findings[0].Chain != "active" {
		t.Fatalf("closure finding in chain %q", rep.Findings[0].Chain)
	}
}

func TestVerifyDetectsUnreadableManifest(t *testing.T) {
	m, _ := verifiedStore(t)
	data := mustGet(t, m, remote.CurrentKey)
	for name, bad := range map[string][]byte{
		"truncated":       data[:len(data)/2],
		"unknown version": bytes.Replace(data, []byte(`"version":1`), []byte(`"version":2`), 1),
		"unknown field":   bytes.Replace(data, []byte(`{"version":1`), []byte(`{"extra":1,"version":1`), 1),
	} {
		t.Run(name, func(t *testing.T) {
			putCurrent(t, m, bad)
			rep := verifyFinds(t, m, remote.FindingManifestUnreadable, remote.CurrentKey)
			if len(rep.Orphans) != 0 {
				t.Fatal("packs called orphans though current could not be read")
			}
		})
	}
}

// Every validation rule of docs/storage.md §3, broken one at a time in a
// manifest that still parses.
func TestVerifyDetectsEachManifestRule(t *testing.T) {
	zero := strings.Repeat("0", 64)
	pub := remote.NewUUIDv7()
	cases := []struct {
		name string
		edit func(doc map[string]any)
	}{
		{"generation zero", func(d map[string]any) { d["generation"] = json.Number("0") }},
		{"head zero", func(d map[string]any) { d["head"] = zero }},
		{"generations not increasing", func(d map[string]any) {
			docInc(d, 1)["generation"] = docInc(d, 0)["generation"]
		}},
		{"parent not the previous head", func(d map[string]any) { docInc(d, 1)["parent"] = docInc(d, 0)["parent"] }},
		{"head equals parent", func(d map[string]any) { docInc(d, 1)["head"] = docInc(d, 1)["parent"] }},
		{"first parent not the checkpoint head", func(d map[string]any) {
			d["checkpoint"].(map[string]any)["head"] = docInc(d, 1)["head"]
		}},
		{"pack key not derived", func(d map[string]any) {
			docInc(d, 0)["key"] = remote.IncrementKey(999, docInc(d, 0)["publication"].(string))
		}},
		{"checkpoint key not derived", func(d map[string]any) {
			cp := d["checkpoint"].(map[string]any)
			cp["key"] = remote.IncrementKey(4, cp["publication"].(string))
		}},
		{"size zero", func(d map[string]any) { docInc(d, 0)["size"] = json.Number("0") }},
		{"checksum zero", func(d map[string]any) { docInc(d, 0)["blake3"] = zero }},
		{"active chain does not reach head", func(d map[string]any) { d["head"] = docInc(d, 0)["head"] }},
		{"active chain beyond generation", func(d map[string]any) { d["generation"] = json.Number("6") }},
		{"increment at or below the checkpoint", func(d map[string]any) {
			d["checkpoint"].(map[string]any)["through"] = docInc(d, 0)["generation"]
		}},
		{"retained chain does not reach its replacement", func(d map[string]any) {
			r := d["retained"].([]any)[0].(map[string]any)
			r["increments"] = r["increments"].([]any)[:3]
		}},
		{"retained while the checkpoint is genesis", func(d map[string]any) {
			old := d["retained"].([]any)[0].(map[string]any)
			d["checkpoint"] = old["checkpoint"]
			d["increments"] = old["increments"]
			d["head"] = d["increments"].([]any)[3].(map[string]any)["head"]
		}},
		{"publication not a UUIDv7", func(d map[string]any) {
			bad := pub[:14] + "4" + pub[15:] // the version digit: a version-4 layout
			docInc(d, 1)["publication"] = bad
			docInc(d, 1)["key"] = remote.IncrementKey(7, bad)
		}},
		{"duplicate publication", func(d map[string]any) {
			p := docInc(d, 0)["publication"].(string)
			docInc(d, 1)["publication"] = p
			docInc(d, 1)["key"] = remote.IncrementKey(7, p)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, mf := verifiedStore(t)
			if mf.Generation != 7 || len(mf.Increments) != 2 || len(mf.Retained) != 1 {
				t.Fatalf("fixture changed: generation %d", mf.Generation)
			}
			data := mustGet(t, m, remote.CurrentKey)
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.UseNumber()
			var doc map[string]any
			if err := dec.Decode(&doc); err != nil {
				t.Fatal(err)
			}
			c.edit(doc)
			bad, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := remote.DecodeManifest(bad); err == nil {
				t.Fatal("the edit breaks no rule")
			}
			putCurrent(t, m, bad)
			verifyFinds(t, m, remote.FindingManifestInvalid, remote.CurrentKey)
		})
	}
}

// docInc returns the active increment i of a decoded manifest document.
func docInc(doc map[string]any, i int) map[string]any {
	return doc["increments"].([]any)[i].(map[string]any)
}

func putCurrent(t *testing.T, m *memstore.Mem, data []byte) {
	t.Helper()
	if err := m.Put(context.Background(), remote.CurrentKey, data); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyListsOrphansWithoutFailing(t *testing.T) {
	m, _ := verifiedStore(t)
	orphan := remote.IncrementKey(3, remote.NewUUIDv7())
	if err := m.Put(context.Background(), orphan, []byte("a proposal that lost")); err != nil {
		t.Fatal(err)
	}
	rep := mustVerify(t, m)
	keys := []string{}
	for _, o := range rep.Orphans {
		keys = append(keys, o.Key)
	}
	if !slices.Equal(keys, []string{orphan}) {
		t.Fatalf("orphans %v, want %s", keys, orphan)
	}
	if rep.Generation != 7 || rep.Chains != 2 || rep.Packs != 7 || rep.Objects == 0 || rep.Bytes == 0 {
		t.Fatalf("report counts: %+v", rep)
	}
}

func TestVerifyEmptyStoreIsWhole(t *testing.T) {
	rep := mustVerify(t, memstore.New())
	if rep.Generation != 0 || rep.Packs != 0 {
		t.Fatalf("empty store report %+v", rep)
	}
}

// Format 3: segments carried in their folding publication's pack verify
// whole; a carrier that lost the segment's chunk, or is gone, is named.
func TestVerifyChecksCarriedSegments(t *testing.T) {
	ctx := context.Background()
	m := memstore.New()
	w := newTreeWriter(m)
	w.carry = true
	w.commitN(t, 40)
	rep := mustVerify(t, m)
	if own := packKeys(t, m, remote.SegmentsPrefix); len(own) != 0 || rep.Generation != 40 {
		t.Fatalf("segments of their own %v; generation %d", own, rep.Generation)
	}
	cur, err := w.nb.ReadCurrent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	seg := cur.Manifest.Segments[0]
	if !seg.Carried() {
		t.Fatalf("the oldest segment is not carried: %+v", seg)
	}
	carrier, _, err := m.Get(ctx, seg.Key())
	if err != nil {
		t.Fatal(err)
	}
	// The carrier without the chunk: every other object kept.
	p, err := cas.OpenPack(carrier)
	if err != nil {
		t.Fatal(err)
	}
	pw := cas.NewPackWriter()
	for _, id := range p.IDs() {
		if id == seg.Sum {
			continue
		}
		o, err := p.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		if err := pw.Put(o); err != nil {
			t.Fatal(err)
		}
	}
	stripped, err := pw.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Put(ctx, seg.Key(), stripped); err != nil {
		t.Fatal(err)
	}
	verifyFinds(t, m, remote.FindingSegmentCorrupt, seg.Key())
	if err := m.Delete(ctx, seg.Key()); err != nil {
		t.Fatal(err)
	}
	verifyFinds(t, m, remote.FindingSegmentMissing, seg.Key())
}
