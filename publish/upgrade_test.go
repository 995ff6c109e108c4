package publish

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/remotetest"
)

// loadV3Store copies the version-3 fixture store (written once by a
// version-3 binary) into mem.
func loadV3Store(t *testing.T, mem *memstore.Mem) {
	remotetest.CopyFixture(t, filepath.Join("..", "remote", "testdata", "v3-store"), mem)
}

// v3Current returns the version-3 `current` in mem and its ETag.
func v3Current(t *testing.T, mem remote.Store) (*remote.Manifest, string) {
	t.Helper()
	data, etag, err := mem.Get(context.Background(), remote.CurrentKey)
	if err != nil {
		t.Fatal(err)
	}
	m, err := remote.DecodeManifest(data)
	if err != nil {
		t.Fatal(err)
	}
	return m, etag
}

// The first commit on a version-3 store upgrades it: one conditional
// write accepts the commit at the next generation and makes `current`
// version 4, `upgraded` that generation; the next commit builds on it;
// every generation the version-3 `current` listed is still listed, with
// its pack, and the tree holds every line of both eras. A version-3
// binary then refuses the store naming version 4.
func TestCommitUpgradesAVersion3Store(t *testing.T) {
	e := newEnv(t, nil)
	loadV3Store(t, e.mem)
	old, _ := v3Current(t, e.mem)
	before, err := remote.Open(e.mem, remote.Options{}).Publications(context.Background(), remote.State{Manifest: old}, 1, old.Generation)
	if err != nil {
		t.Fatal(err)
	}
	notes := e.files(old.Head)["notes.md"]
	if !strings.HasSuffix(notes, "line 48\n") {
		t.Fatalf("the fixture's notes.md ends %q", notes[max(0, len(notes)-20):])
	}
	r1 := e.commit(map[string]*string{"notes.md": str(notes + "line 49\n")})
	m := e.current()
	if r1.Generation != old.Generation+1 || m.Upgraded != r1.Generation || m.Generation != r1.Generation || m.AcceptedAt(e.idAt(1)) != r1.Generation {
		t.Fatalf("the upgrade: accepted at %d, current %d upgraded at %d", r1.Generation, m.Generation, m.Upgraded)
	}
	r2 := e.commit(map[string]*string{"notes.md": str(notes + "line 49\nline 50\n")})
	m = e.current()
	if r2.Generation != r1.Generation+1 || len(m.Recent) != 2 || m.Upgraded != r1.Generation {
		t.Fatalf("the second commit: %d, recent %d", r2.Generation, len(m.Recent))
	}
	if got := e.files(m.Head)["notes.md"]; got != notes+"line 49\nline 50\n" {
		t.Fatalf("notes.md ends %q", got[max(0, len(got)-30):])
	}
	oldIncs, v4Incs, err := m.Publications(context.Background(), e.mem, 1, m.Generation)
	if err != nil {
		t.Fatal(err)
	}
	if len(oldIncs) != len(before) || len(v4Incs) != 2 {
		t.Fatalf("%d version-3 and %d version-4 publications listed, want %d and 2", len(oldIncs), len(v4Incs), len(before))
	}
	src, _ := allPacks(e.mem)(context.Background(), State{})
	for i, inc := range oldIncs {
		if inc != before[i] {
			t.Fatalf("generation %d changed: %+v", before[i].Generation, inc)
		}
		if err := cas.CheckClosure(src, inc.Head); err != nil {
			t.Fatalf("generation %d: %v", inc.Generation, err)
		}
	}
	data, _, _ := e.mem.Get(context.Background(), remote.CurrentKey)
	if _, err := remote.DecodeManifest(data); !errors.Is(err, remote.ErrFormatNewer) {
		t.Fatalf("a version-3 binary reads the upgraded store: %v", err)
	}
}

// idAt is the ID e.id() returned the n-th time.
func (e *env) idAt(n int) string {
	save := e.n
	e.n = n - 1
	id := e.id()
	e.n = save
	return id
}

// v3Racer is a store on which a version-3 writer publishes one commit
// at a chosen moment around the version-4 writer's conditional write of
// `current`: first (it reads and writes before the version-4 write is
// applied) or last (it read `current` before, and writes after).
type v3Racer struct {
	*memstore.Mem
	t     *testing.T
	first bool
	done  bool
	v3    error // the version-3 writer's outcome
}

func (s *v3Racer) ReplaceIfMatch(ctx context.Context, key string, data []byte, etag string) (string, error) {
	if key != remote.CurrentKey || s.done {
		return s.Mem.ReplaceIfMatch(ctx, key, data, etag)
	}
	s.done = true
	old, oldTag := v3Current(s.t, s.Mem)
	write := func() error {
		// The version-3 protocol's write: its increment pack, then
		// `current` conditionally on the state it read.
		id := "01a249d6-ffff-7000-8000-000000000099"
		gen := old.Generation + 1
		pw := cas.NewPackWriter()
		c := cas.EncodeCommit(cas.Commit{Tree: s.tree(old.Head), Parent: old.Head, Publication: id, Message: []byte("v3")})
		if err := pw.Put(c); err != nil {
			return err
		}
		pack, err := pw.Finish()
		if err != nil {
			return err
		}
		ref := remote.PackRef{Key: remote.IncrementKey(gen, id), Sum: cas.Sum(pack), Size: int64(len(pack))}
		next, err := old.ExtendAt(id, c.ID, ref, 1)
		if err != nil {
			return err
		}
		enc, err := remote.EncodeManifest(next)
		if err != nil {
			return err
		}
		if err := s.Mem.Put(ctx, ref.Key, pack); err != nil {
			return err
		}
		_, err = s.Mem.ReplaceIfMatch(ctx, remote.CurrentKey, enc, oldTag)
		return err
	}
	if s.first {
		s.v3 = write()
		return s.Mem.ReplaceIfMatch(ctx, key, data, etag)
	}
	tag, err := s.Mem.ReplaceIfMatch(ctx, key, data, etag)
	s.v3 = write()
	return tag, err
}

// tree is the root tree of commit head (the version-3 racer changes no
// file: a commit of the same tree).
func (s *v3Racer) tree(head cas.ID) cas.ID {
	src, _ := allPacks(s.Mem)(context.Background(), State{})
	tree, _, err := commitFiles(src, head)
	if err != nil {
		s.t.Fatal(err)
	}
	return tree
}

// A version-3 writer racing the upgrade: when its write lands first, the
// version-4 write is refused (its ETag is gone), the version-4 writer
// reads the new version-3 `current` and upgrades on top of it, so both
// commits are accepted, the version-3 one below `upgraded`. When the
// upgrade lands first, the version-3 write is refused, and its writer's
// next read of `current` is ErrFormatNewer: nothing is published over a
// version-4 store by an older binary.
func TestUpgradeRacesAVersion3Writer(t *testing.T) {
	for _, first := range []bool{true, false} {
		var racer *v3Racer
		e := newEnv(t, func(m *memstore.Mem) remote.Store {
			racer = &v3Racer{Mem: m, t: t, first: first}
			return racer
		})
		loadV3Store(t, e.mem)
		old, _ := v3Current(t, e.mem)
		r := e.commit(map[string]*string{"v4.md": str("upgraded\n")})
		m := e.current()
		if !racer.done {
			t.Fatal("the race never ran")
		}
		if first {
			if racer.v3 != nil {
				t.Fatalf("the version-3 writer, first: %v", racer.v3)
			}
			if r.Generation != old.Generation+2 || m.Upgraded != r.Generation {
				t.Fatalf("upgraded on top: accepted at %d, upgraded %d, the old generation %d", r.Generation, m.Upgraded, old.Generation)
			}
			oldIncs, _, err := m.Publications(context.Background(), e.mem, old.Generation+1, old.Generation+1)
			if err != nil || len(oldIncs) != 1 || oldIncs[0].Publication != "01a249d6-ffff-7000-8000-000000000099" {
				t.Fatalf("the version-3 commit is not listed: %v %v", oldIncs, err)
			}
			continue
		}
		if !errors.Is(racer.v3, remote.ErrPrecondition) {
			t.Fatalf("the version-3 writer, last: %v", racer.v3)
		}
		if r.Generation != old.Generation+1 || m.Upgraded != r.Generation {
			t.Fatalf("accepted at %d, upgraded %d", r.Generation, m.Upgraded)
		}
		data, _, _ := e.mem.Get(context.Background(), remote.CurrentKey)
		var fv *remote.FormatVersionError
		if _, err := remote.DecodeManifest(data); !errors.As(err, &fv) || fv.Version != 4 {
			t.Fatalf("the version-3 writer's next read: %v", err)
		}
	}
}
