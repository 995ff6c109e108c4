// Package remotetest is the contract suite every remote.Store backend
// passes: internal/memstore, remote/filestore and remote/s3store (on
// SeaweedFS) each call Run in a few lines.
// Backends drift apart exactly where no shared test looks, so every
// behaviour the publication protocol relies on is asserted here once.
//
// The suite is sequential; racing subtests use a barrier so that N writers
// really hold the same ETag when they write.
package remotetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/remote"
)

// Racers is the number of concurrent writers in the race subtests.
const Racers = 8

// Run runs the contract suite. newStore returns a fresh, empty store (its
// own prefix) each time it is called; it is called at least once per
// subtest, with the subtest's t.
func Run(t *testing.T, newStore func(t *testing.T) remote.Store) {
	t.Helper()
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, newStore func(t *testing.T) remote.Store)
	}{
		{"Guarantees", testGuarantees},
		{"Missing", testMissing},
		{"PutGetHead", testPutGetHead},
		{"EmptyAndBinary", testEmptyAndBinary},
		{"Large", testLarge},
		{"CreateIfAbsentExisting", testCreateExisting},
		{"ReplaceIfMatchChain", testReplaceChain},
		{"ReplaceIfMatchRefused", testReplaceRefused},
		{"ListByPrefix", testList},
		{"ListAfter", testListAfter},
		{"Delete", testDelete},
		{"InvalidKeys", testInvalidKeys},
		{"CancelledWriteLeavesNothing", testCancelledWrite},
		{"Isolation", testIsolation},
		{"Identity", testIdentity},
		{"RaceCreate", testRaceCreate},
		{"RaceReplace", testRaceReplace},
		{"NoLostUpdates", testNoLostUpdates},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newStore) })
	}
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// mustGet reads key and fails the test on error.
func mustGet(t *testing.T, ctx context.Context, s remote.Store, key string) ([]byte, string) {
	t.Helper()
	data, etag, err := s.Get(ctx, key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	if etag == "" {
		t.Fatalf("Get(%q) returned an empty ETag", key)
	}
	return data, etag
}

func expectErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: got error %v, want one matching %v", what, err, want)
	}
}

func testGuarantees(t *testing.T, newStore func(t *testing.T) remote.Store) {
	s := newStore(t)
	ctx := ctxFor(t)
	if err := remote.CheckGuarantees(ctx, s, remote.ProbeKey(remote.NewUUIDv7())); err != nil {
		t.Fatalf("CheckGuarantees: %v", err)
	}
	if err := remote.Probe(ctx, s); err != nil {
		t.Fatalf("Probe: %v", err)
	}
	if objs, err := s.List(ctx, remote.ProbePrefix); err != nil || len(objs) != 0 {
		t.Fatalf("probe left objects behind: %v, %v", objs, err)
	}
}

func testMissing(t *testing.T, newStore func(t *testing.T) remote.Store) {
	s := newStore(t)
	ctx := ctxFor(t)
	_, _, err := s.Get(ctx, "no/such")
	expectErr(t, "Get missing", err, remote.ErrNotFound)
	_, err = s.Head(ctx, "no/such")
	expectErr(t, "Head missing", err, remote.ErrNotFound)
	if err := s.Delete(ctx, "no/such"); err != nil {
		t.Fatalf("Delete missing: %v, want nil", err)
	}
	_, err = s.ReplaceIfMatch(ctx, "no/such", []byte("x"), `"anything"`)
	expectErr(t, "ReplaceIfMatch missing", err, remote.ErrPrecondition)
	if _, _, err := s.Get(ctx, "no/such"); !errors.Is(err, remote.ErrNotFound) {
		t.Fatalf("a refused replace created the object: %v", err)
	}
	objs, err := s.List(ctx, "")
	if err != nil || len(objs) != 0 {
		t.Fatalf("List on an empty store = %v, %v; want nothing", objs, err)
	}
}

func testPutGetHead(t *testing.T, newStore func(t *testing.T) remote.Store) {
	s := newStore(t)
	ctx := ctxFor(t)
	if err := s.Put(ctx, "packs/a.pack", []byte("first")); err != nil {
		t.Fatal(err)
	}
	data, etag := mustGet(t, ctx, s, "packs/a.pack")
	if string(data) != "first" {
		t.Fatalf("Get = %q, want %q", data, "first")
	}
	info, err := s.Head(ctx, "packs/a.pack")
	if err != nil {
		t.Fatal(err)
	}
	if info.Key != "packs/a.pack" || info.Size != 5 || info.ETag != etag {
		t.Fatalf("Head = %+v, want key packs/a.pack size 5 etag %s", info, etag)
	}
	// Put is unconditional: a second Put replaces (read-after-write).
	if err := s.Put(ctx, "packs/a.pack", []byte("second!")); err != nil {
		t.Fatal(err)
	}
	if data, _ := mustGet(t, ctx, s, "packs/a.pack"); string(data) != "second!" {
		t.Fatalf("Get after overwrite = %q", data)
	}
	// The returned slice belongs to the caller.
	data[0] = 'X'
	if again, _ := mustGet(t, ctx, s, "packs/a.pack"); string(again) != "second!" {
		t.Fatalf("mutating a returned slice changed the store: %q", again)
	}
}

func testEmptyAndBinary(t *testing.T, newStore func(t *testing.T) remote.Store) {
	s := newStore(t)
	ctx := ctxFor(t)
	if _, err := s.CreateIfAbsent(ctx, "empty", nil); err != nil {
		t.Fatal(err)
	}
	if data, _ := mustGet(t, ctx, s, "empty"); len(data) != 0 {
		t.Fatalf("empty object read back as %d bytes", len(data))
	}
	bin := make([]byte, 0, 512)
	for i := range 512 {
		bin = append(bin, byte(i), byte(255-i))
	}
	if err := s.Put(ctx, "bin", bin); err != nil {
		t.Fatal(err)
	}
	if data, _ := mustGet(t, ctx, s, "bin"); !bytes.Equal(data, bin) {
		t.Fatal("binary object not returned byte for byte")
	}
}

func testLarge(t *testing.T, newStore func(t *testing.T) remote.Store) {
	s := newStore(t)
	ctx := ctxFor(t)
	big := pattern(6<<20 + 123)
	if err := s.Put(ctx, "big", big); err != nil {
		t.Fatal(err)
	}
	data, _ := mustGet(t, ctx, s, "big")
	if !bytes.Equal(data, big) {
		t.Fatalf("large object: read %d bytes, differs from the %d written", len(data), len(big))
	}
	if info, err := s.Head(ctx, "big"); err != nil || info.Size != int64(len(big)) {
		t.Fatalf("Head(big) = %+v, %v", info, err)
	}
}

// pattern returns n deterministic, poorly compressible bytes (xorshift).
func pattern(n int) []byte {
	out := make([]byte, n)
	x := uint64(0x9e3779b97f4a7c15)
	for i := range out {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		out[i] = byte(x)
	}
	return out
}

func testCreateExisting(t *testing.T, newStore func(t *testing.T) remote.Store) {
	s := newStore(t)
	ctx := ctxFor(t)
	etag, err := s.CreateIfAbsent(ctx, "current", []byte("one"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.CreateIfAbsent(ctx, "current", []byte("two"))
	expectErr(t, "second CreateIfAbsent", err, remote.ErrPrecondition)
	data, got := mustGet(t, ctx, s, "current")
	if string(data) != "one" || got != etag {
		t.Fatalf("after a refused create: %q etag %s, want %q etag %s", data, got, "one", etag)
	}
	// An object written by Put counts as existing too.
	if err := s.Put(ctx, "p", []byte("x")); err != nil {
		t.Fatal(err)
	}
	_, err = s.CreateIfAbsent(ctx, "p", []byte("y"))
	expectErr(t, "CreateIfAbsent over Put", err, remote.ErrPrecondition)
}

func testReplaceChain(t *testing.T, newStore func(t *testing.T) remote.Store) {
	s := newStore(t)
	ctx := ctxFor(t)
	etag, err := s.CreateIfAbsent(ctx, "current", []byte("v0"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{etag: true}
	for i := 1; i <= 4; i++ {
		want := fmt.Sprintf("v%d", i)
		next, err := s.ReplaceIfMatch(ctx, "current", []byte(want), etag)
		if err != nil {
			t.Fatalf("replace %d: %v", i, err)
		}
		if seen[next] {
			t.Fatalf("replace %d returned an ETag seen before: %s", i, next)
		}
		seen[next] = true
		data, got := mustGet(t, ctx, s, "current")
		if string(data) != want || got != next {
			t.Fatalf("after replace %d: %q etag %s, want %q etag %s", i, data, got, want, next)
		}
		etag = next
	}
}

func testReplaceRefused(t *testing.T, newStore func(t *testing.T) remote.Store) {
	s := newStore(t)
	ctx := ctxFor(t)
	stale, err := s.CreateIfAbsent(ctx, "current", []byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := s.ReplaceIfMatch(ctx, "current", []byte("b"), stale)
	if err != nil {
		t.Fatal(err)
	}
	for _, etag := range []string{stale, `"not-an-etag"`, ""} {
		_, err := s.ReplaceIfMatch(ctx, "current", []byte("c"), etag)
		expectErr(t, fmt.Sprintf("ReplaceIfMatch with etag %q", etag), err, remote.ErrPrecondition)
	}
	data, got := mustGet(t, ctx, s, "current")
	if string(data) != "b" || got != fresh {
		t.Fatalf("a refused replace changed the object: %q etag %s", data, got)
	}
}

func testList(t *testing.T, newStore func(t *testing.T) remote.Store) {
	s := newStore(t)
	ctx := ctxFor(t)
	keys := []string{"a/1", "a/2", "a/b/3", "ab/4", "b/5", "current"}
	for i, k := range keys {
		if err := s.Put(ctx, k, bytes.Repeat([]byte{'x'}, i+1)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		prefix string
		want   []string
	}{
		{"", keys},
		{"a/", []string{"a/1", "a/2", "a/b/3"}},
		{"a", []string{"a/1", "a/2", "a/b/3", "ab/4"}},
		{"a/b/", []string{"a/b/3"}},
		{"cur", []string{"current"}},
		{"zzz/", nil},
	} {
		objs, err := s.List(ctx, tc.prefix)
		if err != nil {
			t.Fatalf("List(%q): %v", tc.prefix, err)
		}
		var got []string
		for _, o := range objs {
			got = append(got, o.Key)
			if want := int64(slices.Index(keys, o.Key) + 1); o.Size != want {
				t.Fatalf("List(%q): %s has size %d, want %d", tc.prefix, o.Key, o.Size, want)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Fatalf("List(%q) = %v, want %v (sorted by key)", tc.prefix, got, tc.want)
		}
	}
}

// testListAfter: remote.ListAfter, through the backend's own ListAfter
// when it has one, gives exactly the keys of the prefix after the given
// one, sorted, whether or not that key exists.
func testListAfter(t *testing.T, newStore func(t *testing.T) remote.Store) {
	s := newStore(t)
	ctx := ctxFor(t)
	keys := []string{"p/00000000000000000007-a", "p/00000000000000000008-b", "p/00000000000000000008-c", "p/00000000000000000010-d", "q/1"}
	for _, k := range keys {
		if err := s.Put(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		prefix, after string
		want          []string
	}{
		{"p/", "", keys[:4]},
		{"p/", "p/00000000000000000008-b", keys[2:4]},
		{"p/", "p/00000000000000000008~", keys[3:4]}, // every key of generation 8 and below
		{"p/", "p/00000000000000000007", keys[:4]},   // not a key: what sorts after it
		{"p/", "p/~", nil},
		{"", "p/00000000000000000010-d", keys[4:]},
	} {
		objs, err := remote.ListAfter(ctx, s, tc.prefix, tc.after)
		if err != nil {
			t.Fatalf("ListAfter(%q, %q): %v", tc.prefix, tc.after, err)
		}
		var got []string
		for _, o := range objs {
			got = append(got, o.Key)
		}
		if !slices.Equal(got, tc.want) {
			t.Fatalf("ListAfter(%q, %q) = %v, want %v", tc.prefix, tc.after, got, tc.want)
		}
	}
}

func testDelete(t *testing.T, newStore func(t *testing.T) remote.Store) {
	s := newStore(t)
	ctx := ctxFor(t)
	for _, k := range []string{"packs/x/1", "packs/x/2"} {
		if err := s.Put(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Delete(ctx, "packs/x/1"); err != nil {
		t.Fatal(err)
	}
	_, _, err := s.Get(ctx, "packs/x/1")
	expectErr(t, "Get after Delete", err, remote.ErrNotFound)
	objs, err := s.List(ctx, "packs/")
	if err != nil || len(objs) != 1 || objs[0].Key != "packs/x/2" {
		t.Fatalf("List after Delete = %v, %v; want only packs/x/2", objs, err)
	}
	// A deleted key can be created again.
	if _, err := s.CreateIfAbsent(ctx, "packs/x/1", []byte("again")); err != nil {
		t.Fatalf("CreateIfAbsent after Delete: %v", err)
	}
}

func testInvalidKeys(t *testing.T, newStore func(t *testing.T) remote.Store) {
	s := newStore(t)
	ctx := ctxFor(t)
	for _, key := range []string{"", "/abs", "a//b", "a/../b", "..", "a/./b", "trailing/", `back\slash`, ".hidden", "nul\x00"} {
		if err := s.Put(ctx, key, []byte("x")); !errors.Is(err, remote.ErrInvalidKey) {
			t.Errorf("Put(%q) = %v, want ErrInvalidKey", key, err)
		}
		if _, _, err := s.Get(ctx, key); !errors.Is(err, remote.ErrInvalidKey) {
			t.Errorf("Get(%q) = %v, want ErrInvalidKey", key, err)
		}
	}
	if objs, err := s.List(ctx, ""); err != nil || len(objs) != 0 {
		t.Fatalf("refused keys left objects: %v, %v", objs, err)
	}
}

func testCancelledWrite(t *testing.T, newStore func(t *testing.T) remote.Store) {
	s := newStore(t)
	ctx := ctxFor(t)
	etag, err := s.CreateIfAbsent(ctx, "current", []byte("kept"))
	if err != nil {
		t.Fatal(err)
	}
	dead, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Put(dead, "packs/p", pattern(1<<20)); err == nil {
		t.Fatal("Put with a cancelled context succeeded")
	}
	if _, err := s.CreateIfAbsent(dead, "other", []byte("x")); err == nil {
		t.Fatal("CreateIfAbsent with a cancelled context succeeded")
	}
	if _, err := s.ReplaceIfMatch(dead, "current", []byte("lost"), etag); err == nil {
		t.Fatal("ReplaceIfMatch with a cancelled context succeeded")
	}
	objs, err := s.List(ctx, "")
	if err != nil || len(objs) != 1 || objs[0].Key != "current" {
		t.Fatalf("failed writes left objects: %v, %v", objs, err)
	}
	if data, got := mustGet(t, ctx, s, "current"); string(data) != "kept" || got != etag {
		t.Fatalf("a failed replace changed current: %q", data)
	}
}

func testIsolation(t *testing.T, newStore func(t *testing.T) remote.Store) {
	a, b := newStore(t), newStore(t)
	ctx := ctxFor(t)
	if err := a.Put(ctx, "current", []byte("a")); err != nil {
		t.Fatal(err)
	}
	_, _, err := b.Get(ctx, "current")
	expectErr(t, "Get from a second fresh store", err, remote.ErrNotFound)
	if objs, err := b.List(ctx, ""); err != nil || len(objs) != 0 {
		t.Fatalf("a fresh store lists another store's objects: %v, %v", objs, err)
	}
}

func testIdentity(t *testing.T, newStore func(t *testing.T) remote.Store) {
	a, b := newStore(t), newStore(t)
	if id := a.Identity(); id == "" || a.Identity() != id {
		t.Fatalf("Identity must be non-empty and stable, got %q", id)
	}
	if a.Identity() == b.Identity() {
		t.Fatalf("two stores with different prefixes share the identity %q", a.Identity())
	}
}

// race runs fn in Racers goroutines released together and returns their
// errors by index.
func race(ctx context.Context, fn func(ctx context.Context, i int) error) []error {
	errs := make([]error, Racers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range Racers {
		wg.Go(func() {
			<-start
			errs[i] = fn(ctx, i)
		})
	}
	close(start)
	wg.Wait()
	return errs
}

// oneWinner asserts exactly one nil error and ErrPrecondition for the rest,
// and returns the winner's index.
func oneWinner(t *testing.T, errs []error) int {
	t.Helper()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("writers %d and %d both won", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, remote.ErrPrecondition):
			t.Fatalf("losing writer %d got %v, want ErrPrecondition (a lost race is never a storage error)", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no writer won")
	}
	return winner
}

func testRaceCreate(t *testing.T, newStore func(t *testing.T) remote.Store) {
	s := newStore(t)
	ctx := ctxFor(t)
	etags := make([]string, Racers)
	errs := race(ctx, func(ctx context.Context, i int) error {
		var err error
		etags[i], err = s.CreateIfAbsent(ctx, "current", fmt.Appendf(nil, "writer %d", i))
		return err
	})
	w := oneWinner(t, errs)
	data, etag := mustGet(t, ctx, s, "current")
	if string(data) != fmt.Sprintf("writer %d", w) || etag != etags[w] {
		t.Fatalf("stored %q etag %s; the winner was writer %d with etag %s", data, etag, w, etags[w])
	}
}

func testRaceReplace(t *testing.T, newStore func(t *testing.T) remote.Store) {
	s := newStore(t)
	ctx := ctxFor(t)
	if _, err := s.CreateIfAbsent(ctx, "current", []byte("base")); err != nil {
		t.Fatal(err)
	}
	// Every writer reads the same ETag, waits for the others, then writes.
	read := make([]string, Racers)
	etags := make([]string, Racers)
	var readAll sync.WaitGroup
	readAll.Add(Racers)
	errs := race(ctx, func(ctx context.Context, i int) error {
		_, etag, err := s.Get(ctx, "current")
		read[i] = etag
		readAll.Done()
		if err != nil {
			return err
		}
		readAll.Wait()
		etags[i], err = s.ReplaceIfMatch(ctx, "current", fmt.Appendf(nil, "writer %d", i), etag)
		return err
	})
	for i := range read {
		if read[i] != read[0] {
			t.Fatalf("writers read different ETags before the barrier: %v", read)
		}
	}
	w := oneWinner(t, errs)
	data, etag := mustGet(t, ctx, s, "current")
	if string(data) != fmt.Sprintf("writer %d", w) || etag != etags[w] {
		t.Fatalf("stored %q etag %s; the winner was writer %d with etag %s", data, etag, w, etags[w])
	}
}

// testNoLostUpdates runs read-modify-write loops on one counter from
// several writers: with a correct conditional replace no increment is lost.
func testNoLostUpdates(t *testing.T, newStore func(t *testing.T) remote.Store) {
	s := newStore(t)
	ctx := ctxFor(t)
	const perWriter = 5
	if _, err := s.CreateIfAbsent(ctx, "counter", []byte("0")); err != nil {
		t.Fatal(err)
	}
	errs := race(ctx, func(ctx context.Context, i int) error {
		for done := 0; done < perWriter; {
			data, etag, err := s.Get(ctx, "counter")
			if err != nil {
				return err
			}
			var n int
			if _, err := fmt.Sscan(string(data), &n); err != nil {
				return fmt.Errorf("counter holds %q: %w", data, err)
			}
			_, err = s.ReplaceIfMatch(ctx, "counter", fmt.Append(nil, n+1), etag)
			switch {
			case err == nil:
				done++
			case !errors.Is(err, remote.ErrPrecondition):
				return err
			}
		}
		return nil
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("writer %d: %v", i, err)
		}
	}
	data, _ := mustGet(t, ctx, s, "counter")
	if want := fmt.Sprint(Racers * perWriter); string(data) != want {
		t.Fatalf("counter = %s after %s increments: updates were lost", data, want)
	}
}

// Built is a change built for tests: a pack and its head commit.
type Built struct {
	Pack []byte
	Head cas.ID
}

// Proposal returns a valid change for tests: a pack holding one commit on
// parent made by publication pub, with a placeholder tree (remote checks
// the commit, not its closure). note makes commits of different writers
// differ.
func Proposal(parent cas.ID, pub string, note []byte) Built {
	commit := cas.EncodeCommit(cas.Commit{Tree: cas.Sum(append([]byte("tree "), note...)), Parent: parent,
		Publication: pub, Time: time.Unix(1700000000, 0), Message: note})
	w := cas.NewPackWriter()
	if err := w.Put(commit); err != nil {
		panic(err)
	}
	pack, err := w.Finish()
	if err != nil {
		panic(err)
	}
	return Built{Pack: pack, Head: commit.ID}
}

// CopyFixture copies a fixture store kept in testdata in the file
// backend's layout (one file per key; a README.md beside the keys) into
// dst, so a test can write to it without ever changing the fixture.
func CopyFixture(t testing.TB, dir string, dst remote.Store) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "README.md" {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		key, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		return dst.Put(context.Background(), filepath.ToSlash(key), data)
	})
	if err != nil {
		t.Fatal(err)
	}
}
