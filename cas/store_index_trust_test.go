package cas_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
)

// indexAt rewrites the merged index of a store made by mergedStore from a
// listing whose directory mtime is age before the listing: the index is
// spoilt in place (which leaves the directory alone), the directory's mtime
// set back, and the store reopened, which loads every pack on its own and
// writes the index again, in place.
func indexAt(t *testing.T, dir string, age time.Duration) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, ".index"), []byte("spoilt"), 0o600); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-age)
	if err := os.Chtimes(dir, past, past); err != nil {
		t.Fatal(err)
	}
	openStore(t, dir)
	if st, err := os.Stat(dir); err != nil || !st.ModTime().Equal(past) {
		t.Fatalf("writing the merged index changed the directory: %v, %v", st.ModTime(), err)
	}
}

// trustedStore makes a store whose merged index vouches for its directory.
func trustedStore(t *testing.T, n int) (string, []string, []cas.ID) {
	t.Helper()
	dir, names, ids := mergedStore(t, n)
	indexAt(t, dir, 3*time.Second)
	return dir, names, ids
}

// truncateInPlace cuts the file to size bytes without touching its
// directory: the one change a directory's identity cannot show.
func truncateInPlace(t *testing.T, path string, size int64) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
	return data
}

// With an index that vouches for the directory, opening lists nothing and
// stats no pack: a pack truncated in place is not seen at open but fails
// the read of its object as corrupt, and dropping and re-adding it (what
// the server's healing does) repairs the store. The same index written
// from a listing within racyWindow of the directory's mtime is not
// trusted: the open checks every pack and reports the truncated one.
func TestStoreIndexTrustedByDirectoryIdentity(t *testing.T) {
	for _, tc := range []struct {
		name    string
		age     time.Duration
		trusted bool
	}{
		{"quiet", 3 * time.Second, true},
		{"racy", 500 * time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, names, ids := mergedStore(t, 10)
			indexAt(t, dir, tc.age)
			data := truncateInPlace(t, filepath.Join(dir, names[2]), 30)
			s := openStore(t, dir)
			_, broken := s.Packs()
			if !tc.trusted {
				if !errors.Is(broken[names[2]], cas.ErrTruncated) {
					t.Fatalf("racy index: broken = %v, want %s truncated at open", broken, names[2])
				}
				return
			}
			if len(broken) != 0 {
				t.Fatalf("trusted index: broken = %v at open, want none (no pack checked)", broken)
			}
			if _, err := s.Get(ids[2]); !errors.Is(err, cas.ErrCorrupt) {
				t.Fatalf("object of the truncated pack: error = %v, want ErrCorrupt", err)
			}
			readAll(t, s, append(ids[:2:2], ids[3:]...))
			if err := s.RemovePack(names[2]); err != nil {
				t.Fatal(err)
			}
			if err := s.AddPack(names[2], data); err != nil {
				t.Fatal(err)
			}
			readAll(t, s, ids)
			readAll(t, openStore(t, dir), ids)
		})
	}
}

// Every change of the directory's entries between two opens is seen
// through a trusted index: a pack added, removed, or replaced by rename.
func TestStoreTrustedIndexSeesChangedEntries(t *testing.T) {
	t.Run("added", func(t *testing.T) {
		dir, _, ids := trustedStore(t, 10)
		data, id := packOf(t, []byte("added later"))
		if err := openStore(t, dir).AddPack("later.pack", data); err != nil {
			t.Fatal(err)
		}
		s := openStore(t, dir)
		if !s.Has(id) {
			t.Fatal("the pack added after the index is not loaded at open")
		}
		readAll(t, s, append(ids, id))
	})
	t.Run("removed", func(t *testing.T) {
		dir, names, ids := trustedStore(t, 10)
		if err := os.Remove(filepath.Join(dir, names[7])); err != nil {
			t.Fatal(err)
		}
		s := openStore(t, dir)
		if s.Has(ids[7]) {
			t.Fatal("the removed pack's object is still listed")
		}
		if got, _ := s.Packs(); len(got) != len(names)-1 {
			t.Fatalf("Packs() = %d names, want %d", len(got), len(names)-1)
		}
		readAll(t, s, append(ids[:7:7], ids[8:]...))
	})
	t.Run("replaced by rename", func(t *testing.T) {
		dir, names, ids := trustedStore(t, 10)
		data, id := packOf(t, []byte("a longer replacement of pack 4\n"))
		tmp := filepath.Join(dir, ".replace.tmp")
		if err := os.WriteFile(tmp, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, names[4])); err != nil {
			t.Fatal(err)
		}
		s := openStore(t, dir)
		if !s.Has(id) || s.Has(ids[4]) {
			t.Fatalf("after replacing %s: has new object %v, old %v; want true, false", names[4], s.Has(id), s.Has(ids[4]))
		}
		readAll(t, s, append(append(ids[:4:4], ids[5:]...), id))
	})
}

// A directory replaced by a copy with the same mtime (and index) is not
// the directory the index vouches for: its inode differs, so the open
// checks every pack and reports one truncated in the copy.
func TestStoreTrustedIndexNotForReplacedDirectory(t *testing.T) {
	dir, names, _ := trustedStore(t, 10)
	st, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	copyDir := dir + ".copy"
	if err := os.Mkdir(copyDir, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(copyDir) })
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		data, err := os.ReadFile(filepath.Join(dir, de.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if de.Name() == names[2] {
			data = data[:30]
		}
		if err := os.WriteFile(filepath.Join(copyDir, de.Name()), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Rename(dir, dir+".old"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir + ".old") })
	if err := os.Rename(copyDir, dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(dir, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, dir)
	if _, broken := s.Packs(); !errors.Is(broken[names[2]], cas.ErrTruncated) {
		t.Fatalf("replaced directory: broken = %v, want %s truncated at open", broken, names[2])
	}
}

// A directory that changed since its index was written but has been quiet
// for longer than a minute gets its index rewritten once by an open, and
// the next open trusts it.
func TestStoreQuietDirectoryIndexRewritten(t *testing.T) {
	dir, names, ids := mergedStore(t, 10) // the index is older than the directory
	past := time.Now().Add(-2 * time.Minute)
	if err := os.Chtimes(dir, past, past); err != nil {
		t.Fatal(err)
	}
	openStore(t, dir)
	truncateInPlace(t, filepath.Join(dir, names[6]), 30)
	s := openStore(t, dir)
	if _, broken := s.Packs(); len(broken) != 0 {
		t.Fatalf("broken = %v at open, want none: the rewritten index should vouch", broken)
	}
	if _, err := s.Get(ids[6]); !errors.Is(err, cas.ErrCorrupt) {
		t.Fatalf("object of the truncated pack: error = %v, want ErrCorrupt", err)
	}
}
