package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/osfile"
	"github.com/slivingdoc/slivingdoc/remote"
)

// What binaries before format version 4 left behind, with every mode
// on, changes nothing for this one: in the store, a registration on the
// generation `current` is at, a lead marker and a group pack under
// proposals/; on the machine, the turn lock held by an older process
// still running, the state it kept (reliable, naming `current` with an
// ETag that no longer matches), a kept pack, an offer and a waiting mark
// in the user cache directory, and a contention record in the private
// root. Commits given the retired flags and variables warn once per
// setting and publish, each at the next generation, accepting no
// registration; verify is clean; the files on the machine stay as they
// were (ignored, never read or rewritten).
func TestCLIIgnoresWhatOlderModesLeft(t *testing.T) {
	ctx := context.Background()
	dir := copyStoreFixture(t, "v3-store")
	nb := &notebook{t: t, bin: cliBinary(t), env: []string{"SLIVINGDOC_STORE=file://" + filepath.ToSlash(dir)}, backend: "file"}
	store := openTestStore(t, nb.env)
	id, err := remote.ReadStoreID(ctx, store)
	if err != nil || id == "" {
		t.Fatalf("the fixture's store ID: %q, %v", id, err)
	}
	cur, err := remote.Open(store, remote.Options{}).ReadCurrent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	g := cur.Generation()
	key := func(s string) string { // the older binaries' names for a store's records (hashKey)
		sum := cas.Sum([]byte(s))
		return hex.EncodeToString(sum[:16])
	}
	write := func(p string, data []byte) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// The store: what group commit left on the current generation.
	pub := remote.NewUUIDv7()
	d := remote.ProposalDescriptor{Publication: pub, ParentGeneration: g, Parent: cur.Head(), Head: cas.Sum([]byte("head")),
		Pack: remote.PackRef{Key: remote.IncrementKey(g+1, pub), Sum: cas.Sum([]byte("pack")), Size: 4}}
	for k, data := range map[string][]byte{
		remote.ProposalKey(g, pub):    remote.EncodeProposal(d),
		remote.ProposalKey(g, "lead"): []byte(pub + "\n"),
		remote.GroupPackKey(g, pub):   []byte("not a pack"),
	} {
		if err := store.Put(ctx, k, data); err != nil {
			t.Fatal(err)
		}
	}

	// The machine: turns, kept state, packs and offers in the user cache
	// directory, contention in the private root.
	a := nb.agent("a")
	base := filepath.Dir(a.priv)
	turns := filepath.Join(base, "xdg-cache", "slivingdoc", "turns", key(store.Identity()+"\x00"+id))
	leftovers := map[string][]byte{
		turns + ".turn":    nil,
		turns + ".current": append([]byte("reliable\n\"an-etag-long-gone\"\n"), mustRead(t, filepath.Join(dir, "current"))...),
		filepath.Join(turns+".packs", filepath.Base(remote.IncrementKey(g+1, pub))):    []byte("not a pack"),
		filepath.Join(turns+".offers", fmt.Sprintf("%020d-%s", g, remote.NewUUIDv7())): []byte("not an offer"),
		filepath.Join(turns+".offers", "w-"+remote.NewUUIDv7()):                        nil,
		filepath.Join(a.priv, "stores", key(store.Identity()), "contention"):           []byte(fmt.Sprintf("1 %d %d %d\n", time.Now().UnixNano(), time.Now().UnixNano(), g)),
	}
	for p, data := range leftovers {
		write(p, data)
	}
	lock, err := osfile.Acquire(turns+".lock", 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()

	if res := a.pull(); res.generation != g {
		t.Fatalf("pull at generation %d, want %d", res.generation, g)
	}
	retired := []string{"SLIVINGDOC_LOCAL_TURNS=true", "SLIVINGDOC_TURN_OFFERS=true", "SLIVINGDOC_GROUP_COMMIT=true"}
	for i := range 3 {
		a.write(fmt.Sprintf("mine%d.md", i), "mine\n")
		args := []string{"commit", a.dir, "-m", fmt.Sprint("mine ", i)}
		if i == 1 {
			args = append(args, "--group-commit", "--local-turns=false", "--turn-offers")
		}
		o := a.runEnv(retired, args...)
		res := mustOK(t, o)
		if res.generation != g+1+uint64(i) {
			t.Fatalf("commit %d at generation %d, want %d", i, res.generation, g+1+uint64(i))
		}
		warned := strings.Count(o.stderr, "is no longer used")
		if warned != 3 {
			t.Fatalf("commit %d: %d warnings, want one per retired setting given:\n%s", i, warned, o)
		}
		if i == 1 && (!strings.Contains(o.stderr, "--group-commit") || strings.Contains(o.stderr, "SLIVINGDOC_GROUP_COMMIT")) {
			t.Fatalf("a flag given beats its variable, and the warning names the flag:\n%s", o)
		}
	}
	after, err := remote.Open(store, remote.Options{}).ReadCurrent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := after.Manifest.FindPublication(pub); ok {
		t.Fatal("a version-3 registration was accepted")
	}
	if o := a.run("verify"); o.code != 0 {
		t.Fatalf("verify:\n%s", o)
	}
	for p, data := range leftovers {
		got, err := os.ReadFile(p)
		if err != nil || string(got) != string(data) {
			t.Errorf("%s: %q, %v; want it left as it was", p, got, err)
		}
	}
}
