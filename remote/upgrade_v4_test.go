package remote_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/remotetest"
)

// loadStore copies a fixture store into a fresh memory store; the
// fixture is never written.
func loadStore(t *testing.T, dir string) *memstore.Mem {
	mem := memstore.New()
	remotetest.CopyFixture(t, dir, mem)
	return mem
}

// The first version-4 write on a store of version 1, 2 or 3 (the
// fixtures every older binary wrote): the old tail moves into segments of
// version 3, every generation the old `current` listed is still listed by
// the version-4 one, with the same increment, read from segments of the
// version it was written in, and its pack and every checkpoint are
// stored; `upgraded` is the first version-4 generation and `recent` names
// only version-4 generations.
func TestUpgradeToV4KeepsEveryGenerationReadable(t *testing.T) {
	ctx := context.Background()
	const store = "00112233445566778899aabbccddeeff"
	for _, fixture := range []string{"v1-store", "v2-store", "v3-store"} {
		t.Run(fixture, func(t *testing.T) {
			mem := loadStore(t, filepath.Join("testdata", fixture))
			data, _, err := mem.Get(ctx, remote.CurrentKey)
			if err != nil {
				t.Fatal(err)
			}
			v4, old, err := remote.DecodeCurrent(data)
			if err != nil || v4 != nil || old == nil {
				t.Fatalf("DecodeCurrent: %v", err)
			}
			want, err := remote.Open(mem, remote.Options{}).Publications(ctx, remote.State{Manifest: old}, 1, old.Generation)
			if err != nil || len(want) == 0 {
				t.Fatalf("the old history: %d publications, %v", len(want), err)
			}
			base, err := remote.UpgradeToV4(old, store)
			if err != nil {
				t.Fatal(err)
			}
			id := "01936f2a-ffff-7000-8000-000000000001"
			head := cas.Sum([]byte("the first version-4 head"))
			next, ups, err := remote.NextV4(base, store, 1, []remote.MemberV4{{Publication: id, Proposal: old.Generation, Head: head}}, remote.GroupRef{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if old.Version < 3 || len(old.Increments) > 0 {
				if len(ups) == 0 {
					t.Fatal("the old tail made no segment")
				}
			}
			for _, u := range ups {
				if err := mem.Put(ctx, u.Key, u.Data); err != nil {
					t.Fatal(err)
				}
			}
			enc, err := remote.EncodeManifestV4(next)
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := remote.DecodeCurrent(enc)
			if err != nil {
				t.Fatal(err)
			}
			if got.Upgraded != old.Generation+1 || got.Generation != old.Generation+1 || len(got.Recent) != 1 || got.AcceptedAt(id) != got.Generation {
				t.Fatalf("upgraded %d, generation %d, recent %v", got.Upgraded, got.Generation, got.Recent)
			}
			retained := len(old.Checkpoints)
			for _, c := range old.Retained { // version 1: the retained chains' checkpoints
				if !c.Checkpoint.IsGenesis() {
					retained++
				}
			}
			if got.Checkpoint != old.Checkpoint || len(got.Checkpoints) != retained {
				t.Fatal("checkpoints not carried over")
			}
			oldIncs, v4Incs, err := got.Publications(ctx, mem, 1, got.Generation)
			if err != nil {
				t.Fatal(err)
			}
			if len(oldIncs) != len(want) || len(v4Incs) != 1 || v4Incs[0].Publication != id {
				t.Fatalf("%d old and %d new publications, want %d and 1", len(oldIncs), len(v4Incs), len(want))
			}
			for i, inc := range oldIncs {
				if inc != want[i] {
					t.Fatalf("generation %d: %+v, want %+v", want[i].Generation, inc, want[i])
				}
				p, _, err := mem.Get(ctx, inc.Pack.Key)
				if err != nil {
					t.Fatalf("generation %d's pack: %v", inc.Generation, err)
				}
				if pk, err := cas.OpenPack(p); err != nil || cas.Sum(p) != inc.Pack.Sum {
					t.Fatalf("generation %d's pack: %v", inc.Generation, err)
				} else if _, err := pk.Get(inc.Head); err != nil {
					t.Fatalf("generation %d's head is not in its pack: %v", inc.Generation, err)
				}
			}
			for _, cp := range append([]remote.Checkpoint{got.Checkpoint}, got.Checkpoints...) {
				if cp.IsGenesis() {
					continue
				}
				if _, _, err := mem.Get(ctx, cp.Pack.Key); err != nil {
					t.Fatalf("checkpoint through %d: %v", cp.Through, err)
				}
			}
			// Seventy writes later the tail's folds have merged version-4
			// segments with the upgrade's (a level-n segment of version 4
			// over children of version 3): the history still reads whole.
			m := got
			for i := 2; i <= 71; i++ {
				pub := fmt.Sprintf("01936f2a-ffff-7000-8000-%012x", i)
				m, ups, err = remote.NextV4(m, store, 1, []remote.MemberV4{{Publication: pub, Proposal: m.Generation, Head: cas.Sum([]byte(pub))}}, remote.GroupRef{}, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, u := range ups {
					if err := mem.Put(ctx, u.Key, u.Data); err != nil {
						t.Fatal(err)
					}
				}
			}
			if enc, err := remote.EncodeManifestV4(m); err != nil {
				t.Fatal(err)
			} else if _, err := remote.DecodeManifestV4(enc); err != nil {
				t.Fatal(err)
			}
			oldIncs, v4Incs, err = m.Publications(ctx, mem, 1, m.Generation)
			if err != nil || len(oldIncs) != len(want) || len(v4Incs) != 71 {
				t.Fatalf("after 70 more writes: %d old and %d new publications (%v)", len(oldIncs), len(v4Incs), err)
			}
			mixed := false
			for _, s := range m.Segments {
				mixed = mixed || s.First < m.Upgraded && s.Last >= m.Upgraded
			}
			if fixture != "v3-store" && !mixed {
				t.Fatal("no segment spans both versions: the mixed case went untested")
			}

			// A version-3 binary refuses what was written, naming version 4.
			var fv *remote.FormatVersionError
			if _, err := remote.DecodeManifest(enc); !errors.As(err, &fv) || fv.Version != 4 {
				t.Fatalf("an older binary's decoder: %v", err)
			}
		})
	}
}
