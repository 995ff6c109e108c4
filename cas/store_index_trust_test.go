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

// slipIn writes a pack of content into dir and sets the directory's
// times back to what they were: an entry the directory's identity does not
// show, so only an open that lists the directory loads it.
func slipIn(t *testing.T, dir, name string, content []byte) cas.ID {
	t.Helper()
	st, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	data, id := packOf(t, content)
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(dir, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	return id
}

// With an index that vouches for the directory, opening lists nothing and
// stats no pack: a pack slipped in without moving the directory's time is
// not loaded, and a pack truncated in place is not seen at open but fails
// the read of its object as corrupt; dropping and re-adding it (what the
// server's healing does) repairs the store. The same index written from a
// listing within racyWindow of the directory's mtime is not trusted: the
// open lists the directory and loads the slipped-in pack, and still takes
// the recorded pack by its name (damage shows on read, as above).
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
			slipped := slipIn(t, dir, "slipped.pack", []byte("slipped in"))
			s := openStore(t, dir)
			if s.Has(slipped) == tc.trusted {
				t.Fatalf("index trusted = %v, yet the slipped-in pack loaded = %v", tc.trusted, s.Has(slipped))
			}
			if _, broken := s.Packs(); len(broken) != 0 {
				t.Fatalf("broken = %v at open, want none (no recorded pack checked)", broken)
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
			readAll(t, openStore(t, dir), append(ids, slipped))
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
	// A name stands for its bytes: a different pack renamed over a
	// recorded name breaks that rule, and the store still never returns
	// another object's bytes: the recorded object fails its ID check.
	t.Run("replaced by rename", func(t *testing.T) {
		dir, names, ids := trustedStore(t, 10)
		data, _ := packOf(t, []byte("a longer replacement of pack 4\n"))
		tmp := filepath.Join(dir, ".replace.tmp")
		if err := os.WriteFile(tmp, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, names[4])); err != nil {
			t.Fatal(err)
		}
		s := openStore(t, dir)
		if _, err := s.Get(ids[4]); !errors.Is(err, cas.ErrCorrupt) {
			t.Fatalf("object of the replaced pack: error = %v, want ErrCorrupt", err)
		}
		readAll(t, s, append(ids[:4:4], ids[5:]...))
	})
}

// A directory replaced by a copy with the same mtime (and index) is not
// the directory the index vouches for: its inode differs, so the open
// lists it and loads a pack the copy holds beyond the index.
func TestStoreTrustedIndexNotForReplacedDirectory(t *testing.T) {
	dir, _, ids := trustedStore(t, 10)
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
		if err := os.WriteFile(filepath.Join(copyDir, de.Name()), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	data, extra := packOf(t, []byte("only in the copy"))
	if err := os.WriteFile(filepath.Join(copyDir, "extra.pack"), data, 0o600); err != nil {
		t.Fatal(err)
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
	if !s.Has(extra) {
		t.Fatal("replaced directory: the copy's extra pack is not loaded, the index was trusted")
	}
	readAll(t, s, append(ids, extra))
}

// A directory that changed since its index was written gets its identity
// recorded by the first open whose listing is past the racy window, with
// no other wait, and the next open trusts it without listing.
func TestStoreIdentityRecordedOncePastRacyWindow(t *testing.T) {
	dir, _, ids := mergedStore(t, 10) // the index's identity is racy
	setBack := func() {
		past := time.Now().Add(-3 * time.Second)
		if err := os.Chtimes(dir, past, past); err != nil {
			t.Fatal(err)
		}
	}
	setBack()
	openStore(t, dir) // records the identity (creating the side index, which moves the mtime)
	setBack()
	openStore(t, dir) // records it again, in place
	slipped := slipIn(t, dir, "slipped.pack", []byte("slipped in"))
	s := openStore(t, dir)
	if s.Has(slipped) {
		t.Fatal("the open listed the directory: the recorded identity did not vouch")
	}
	readAll(t, s, ids)
}
