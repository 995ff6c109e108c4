package remote_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

// A registration carries its pack (docs/storage.md §4B): the leader that
// includes it reads that one object, never the registrant's own increment
// key, which a follower leaves empty. A registration as writers before
// this form made it, the descriptor alone with its pack at its key, is
// still read and included.
func TestRegistrationCarriesItsPack(t *testing.T) {
	// The older form, as its writers' bytes (write-once fixture).
	old, err := os.ReadFile("testdata/proposal-descriptor-only")
	if err != nil {
		t.Fatal(err)
	}
	key := remote.ProposalKey(41, "01936f2a-0000-7000-8000-000000000042")
	d, pack, err := remote.DecodeRegistration(key, old)
	if err != nil || pack != nil || d.Pack.Key != remote.IncrementKey(42, d.Publication) || d.Pack.Size != 4 {
		t.Fatalf("the descriptor alone: %+v, pack %q, %v; want its pack at its key", d, pack, err)
	}
	d.Pack.Sum = cas.Sum([]byte("abcd"))
	reg := remote.EncodeRegistration(d, []byte("abcd"))
	if got, pack, err := remote.DecodeRegistration(key, reg); err != nil || got != d || string(pack) != "abcd" {
		t.Fatalf("a registration: %+v, pack %q, %v", got, pack, err)
	}
	for name, bad := range map[string][]byte{
		"pack altered":   bytes.Replace(reg, []byte("abcd"), []byte("abce"), 1),
		"pack truncated": reg[:len(reg)-1],
		"pack too long":  append(bytes.Clone(reg), 'x'),
	} {
		if _, _, err := remote.DecodeRegistration(key, bad); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}

	// In the store: two proposals registered on generation 1, one in each
	// form; a leader on generation 1 includes both.
	ctx := context.Background()
	mem := memstore.New()
	clock := spacedClock()
	seed := newGroupWriterAt(mem, clock)
	if _, err := seed.publish(ctx, "seed.md", nil); err != nil {
		t.Fatal(err)
	}
	st, err := seed.nb.ReadCurrent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	register := func(path string, carried bool) string {
		t.Helper()
		pub := remote.NewUUIDv7()
		files, _, err := seed.filesOf(ctx, st)
		if err != nil {
			t.Fatal(err)
		}
		files[path] = []byte(path + "\n")
		prop, err := packFiles(files, st.Head(), pub, time.Unix(1700000000, 0), []byte("add "+path))
		if err != nil {
			t.Fatal(err)
		}
		d := remote.ProposalDescriptor{Publication: pub, ParentGeneration: 1, Parent: st.Head(), Head: prop.Head,
			Pack: remote.PackRef{Key: remote.IncrementKey(2, pub), Sum: cas.Sum(prop.Pack), Size: int64(len(prop.Pack))}}
		data := remote.EncodeProposal(d)
		if carried {
			data = remote.EncodeRegistration(d, prop.Pack)
		} else if err := mem.Put(ctx, d.Pack.Key, prop.Pack); err != nil {
			t.Fatal(err)
		}
		if err := mem.Put(ctx, remote.ProposalKey(1, pub), data); err != nil {
			t.Fatal(err)
		}
		return pub
	}
	older := register("older.md", false)
	carried := register("carried.md", true)
	// Reading the carried one's own key fails: a leader that tried would
	// leave it out.
	mem.Inject(memstore.Fault{Op: memstore.OpGet, KeyPrefix: remote.IncrementKey(2, carried), Before: errors.New("read the registration's own key")})
	// The leader's first write loses a scripted race; its retry
	// registers on generation 1, leads and gathers.
	mem.Inject(memstore.Fault{Op: memstore.OpReplace, KeyPrefix: remote.CurrentKey, Before: remote.ErrPrecondition})
	leader := newGroupWriterAt(mem, clock)
	acc, err := leader.publish(ctx, "leader.md", nil)
	if err != nil {
		t.Fatal(err)
	}
	if acc.Members != 2 || acc.State.Generation() != 4 {
		t.Fatalf("the leader's write: %d members, generation %d; want 2, 4", acc.Members, acc.State.Generation())
	}
	files := headFiles(t, mem)
	for _, p := range []string{"seed.md", "leader.md", "older.md", "carried.md"} {
		if string(files[p]) != p+"\n" {
			t.Errorf("%s: %q", p, files[p])
		}
	}
	for _, pub := range []string{older, carried} {
		if _, ok := acc.State.Manifest.FindPublication(pub); !ok {
			t.Errorf("%s not accepted", pub)
		}
	}
	// The leader registered in the carried form too.
	data, _, err := mem.Get(ctx, remote.ProposalKey(1, acc.Publication))
	if err != nil {
		t.Fatal(err)
	}
	if _, pack, err := remote.DecodeRegistration(remote.ProposalKey(1, acc.Publication), data); err != nil || pack == nil {
		t.Fatalf("the leader's registration: pack %d bytes, %v; want its pack", len(pack), err)
	}
	mustVerify(t, mem)
}
