package remote_test

import (
	"bytes"
	"context"
	"maps"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

// A version-3 registration carries its pack (docs/storage.md §4B); the
// form before it, the descriptor alone with its pack at its key, decodes
// too. Both are the format's bytes, kept decodable for verify and cleanup
// of stores that version-3 writers left them in.
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
}

// What version-3 writers with group commit left under proposals/ (a
// registration on the generation `current` is at, which a leader could
// still have included; older ones; a lead marker; a group pack) is ignored
// by this build: a commit accepts nobody's registration but its own
// change, readers see only what `current` names, verify passes, and
// CleanProposals removes the leftovers that `current` is past.
func TestVersion3RegistrationsAreLeftovers(t *testing.T) {
	ctx := context.Background()
	mem := memstore.New()
	w := newTreeWriter(mem)
	w.mustCommit(t, "seed.md", "seed\n")
	st, err := w.nb.ReadCurrent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	put := func(key string, data []byte) {
		t.Helper()
		if err := mem.Put(ctx, key, data); err != nil {
			t.Fatal(err)
		}
	}
	register := func(path string) (string, string) {
		t.Helper()
		pub := remote.NewUUIDv7()
		files, err := readFiles(mustChain(t, w, st), st.Head())
		if err != nil {
			t.Fatal(err)
		}
		files[path] = []byte(path + "\n")
		prop := proposalOf(t, files, st.Head(), pub)
		d := remote.ProposalDescriptor{Publication: pub, ParentGeneration: 1, Parent: st.Head(), Head: prop.Head,
			Pack: remote.PackRef{Key: remote.IncrementKey(2, pub), Sum: cas.Sum(prop.Pack), Size: int64(len(prop.Pack))}}
		key := remote.ProposalKey(1, pub)
		put(key, remote.EncodeRegistration(d, prop.Pack))
		return key, pub
	}
	regKey, regPub := register("registered.md")
	leadKey := remote.ProposalsPrefix + "00000000000000000001-lead"
	put(leadKey, []byte(regPub+"\n"))
	groupKey := remote.GroupPackKey(1, regPub)
	put(groupKey, []byte("not even a pack"))

	acc := w.mustCommit(t, "mine.md", "mine\n")
	if acc.State.Generation() != 2 {
		t.Fatalf("generation %d, want 2", acc.State.Generation())
	}
	if _, ok := acc.State.Manifest.FindPublication(regPub); ok {
		t.Fatal("a version-3 registration was accepted by this build's commit")
	}
	files := headFiles(t, mem)
	if _, ok := files["registered.md"]; ok || string(files["mine.md"]) != "mine\n" || string(files["seed.md"]) != "seed\n" {
		t.Fatalf("head files %v: want seed.md and mine.md only", slices.Sorted(maps.Keys(files)))
	}
	mustVerify(t, mem)

	deleted, err := w.nb.CleanProposals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(deleted)
	if want := []string{regKey, leadKey, groupKey}; !slices.Equal(deleted, slices.Sorted(slices.Values(want))) {
		t.Fatalf("CleanProposals deleted %v, want %v", deleted, want)
	}
	mustVerify(t, mem)
}

// mustChain is w's view of state's active chain.
func mustChain(t *testing.T, w *treeWriter, state remote.State) chainSource {
	t.Helper()
	src, err := w.chainPacks(context.Background(), state)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// proposalOf packs files whole as the commit of pub on parent.
func proposalOf(t *testing.T, files map[string][]byte, parent cas.ID, pub string) remote.Proposal {
	t.Helper()
	pw := cas.NewPackWriter()
	ids := map[string]cas.ID{}
	for p, c := range files {
		id, err := cas.WriteFile(pw, c)
		if err != nil {
			t.Fatal(err)
		}
		ids[p] = id
	}
	tree, err := cas.WriteTree(pw, ids)
	if err != nil {
		t.Fatal(err)
	}
	commit := cas.EncodeCommit(cas.Commit{Tree: tree, Parent: parent, Publication: pub, Time: time.Unix(1700000000, 0), Message: []byte("v3 registration")})
	if err := pw.Put(commit); err != nil {
		t.Fatal(err)
	}
	pack, err := pw.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return remote.Proposal{Pack: pack, Head: commit.ID}
}
