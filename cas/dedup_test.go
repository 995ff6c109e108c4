package cas_test

import (
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
)

func chunkSet(content []byte) map[cas.ID]bool {
	set := map[cas.ID]bool{}
	for c := range cas.Chunks(content) {
		o, _ := cas.ChunkObject(c)
		set[o.ID] = true
	}
	return set
}

// Inserting 100 bytes at the start of a 1 MiB file keeps at least 90% of
// its chunks: only the chunks around the edit change.
func TestDedupAfterInsertAtStart(t *testing.T) {
	for name, content := range map[string][]byte{
		"random": genBytes(51, 1<<20),
		"text":   genText(52, 1<<20),
	} {
		before := chunkSet(content)
		after := chunkSet(append(genBytes(53, 100), content...))
		kept := 0
		for id := range before {
			if after[id] {
				kept++
			}
		}
		t.Logf("%s: %d of %d chunks kept", name, kept, len(before))
		if kept*10 < len(before)*9 {
			t.Errorf("%s: only %d of %d chunks kept after a 100-byte insert", name, kept, len(before))
		}
	}
}

// newOnly is a Sink that forwards to pack only the objects old lacks, as a
// commit does when it packs what the store does not hold yet.
type newOnly struct {
	old  cas.Source
	pack *cas.PackWriter
}

func (s newOnly) Put(o cas.Object) error {
	if _, err := s.old.Get(o.ID); err == nil {
		return nil
	}
	return s.pack.Put(o)
}

// Appending 1 KiB to a 1 MiB text file and packing only the new objects
// adds at most 16 KiB: the changed last chunk, the new file object, and
// the pack's own framing.
func TestDedupAppendCostsLittle(t *testing.T) {
	old := genText(54, 1<<20)
	m := cas.NewObjectSet()
	mustFile(t, m, old)
	w := cas.NewPackWriter()
	grown := append(old[:len(old):len(old)], genText(55, 1<<10)...)
	id := mustFile(t, newOnly{old: m, pack: w}, grown)
	data, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("pack for a 1 KiB append to 1 MiB: %d bytes, %d objects", len(data), w.Len())
	if len(data) > 16<<10 {
		t.Fatalf("pack of %d bytes for a 1 KiB append, want at most 16 KiB", len(data))
	}
	// The small pack and the old objects together hold the whole new file.
	p, err := cas.OpenPack(data)
	if err != nil {
		t.Fatal(err)
	}
	both := union{p, m}
	if got, err := cas.ReadFile(both, id); err != nil || string(got) != string(grown) {
		t.Fatalf("reading the grown file back: %v", err)
	}
}

// union reads from the first source that has the object.
type union []cas.Source

func (u union) Get(id cas.ID) (cas.Object, error) {
	for _, s := range u {
		if o, err := s.Get(id); err == nil {
			return o, nil
		}
	}
	return cas.Object{}, cas.ErrNotFound
}
