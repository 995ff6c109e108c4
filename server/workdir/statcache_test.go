package workdir

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
)

// statCacheOf encodes m and loads it back, as a stat cache read from P.
func statCacheOf(t *testing.T, m map[string]Entry) *StatCache {
	t.Helper()
	c := NewStatCache()
	for p, e := range m {
		c.Set(p, e)
	}
	loaded, err := DecodeStatCache(c.AppendEntries(nil), len(m))
	if err != nil {
		t.Fatal(err)
	}
	if loaded.over != nil {
		t.Fatal("entries written in order were not searched in place")
	}
	return loaded
}

// The cache answers as the map it stands for, loaded, after sets and
// deletes, and once saved and loaded again; every directory's entries are
// found from its own run, including names that sort around the
// separator ('.' and '-' before '/', '0' after it). Seeded: a failure
// replays from the seed it prints.
func TestStatCacheAnswersAsAMap(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 42))
	segs := []string{"a", "a.md", "a-b", "a0", "a/", "b", "B", "é", "a b"}
	pathOf := func() string {
		var p string
		for d := rng.IntN(3); d > 0; d-- {
			p += segs[rng.IntN(len(segs))]
			if p[len(p)-1] != '/' {
				p += "/"
			}
		}
		name := segs[rng.IntN(len(segs))]
		if name[len(name)-1] == '/' {
			name = name[:len(name)-1]
		}
		return p + name
	}
	entry := func() Entry {
		return Entry{Size: rng.Int64(), Mtime: rng.Int64(), Ino: rng.Uint64(), ID: cas.Sum(fmt.Append(nil, rng.Uint64())), Trusted: rng.IntN(2) == 0}
	}
	for round := range 50 {
		want := map[string]Entry{}
		for range rng.IntN(40) {
			p := pathOf()
			e := entry()
			e.Key = p
			want[p] = e
		}
		c := statCacheOf(t, want)
		check := func(stage string) {
			t.Helper()
			if c.Len() != len(want) {
				t.Fatalf("round %d, %s: %d entries, want %d", round, stage, c.Len(), len(want))
			}
			if got := maps.Collect(c.All()); !maps.Equal(got, want) {
				t.Fatalf("round %d, %s: entries %v, want %v", round, stage, got, want)
			}
			if !slices.IsSorted(slices.Collect(func(yield func(string) bool) {
				for p := range c.All() {
					if !yield(p) {
						return
					}
				}
			})) {
				t.Fatalf("round %d, %s: not yielded in path order", round, stage)
			}
			for range 30 {
				p := pathOf()
				e, ok := c.Get(p)
				w, wok := want[p]
				if ok != wok || e != w {
					t.Fatalf("round %d, %s: Get(%q) = %v %v, want %v %v", round, stage, p, e, ok, w, wok)
				}
				dir, name := "", p
				if i := lastSlash(p); i >= 0 {
					dir, name = p[:i+1], p[i+1:]
				}
				e, ok = c.lookup(c.dirRun(dir), []byte(p), name)
				if ok != wok || e != w {
					t.Fatalf("round %d, %s: lookup(%q, %q) = %v %v, want %v %v", round, stage, dir, name, e, ok, w, wok)
				}
			}
		}
		check("loaded")
		for range rng.IntN(10) {
			p := pathOf()
			if rng.IntN(2) == 0 {
				c.Delete(p)
				delete(want, p)
			} else {
				e := entry()
				c.Set(p, e)
				e.Key = p
				want[p] = e
			}
		}
		check("changed")
		again, err := DecodeStatCache(c.AppendEntries(nil), c.Len())
		if err != nil {
			t.Fatal(err)
		}
		c = again
		check("saved and loaded")
	}
}

func lastSlash(p string) int {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return i
		}
	}
	return -1
}

// Malformed entries are refused, not read past.
func TestStatCacheRefusesMalformedEntries(t *testing.T) {
	c := NewStatCache()
	c.Set("a.md", Entry{Size: 1})
	good := c.AppendEntries(nil)
	for _, bad := range [][]byte{
		good[:len(good)-1],
		append(slices.Clone(good), 0),
		binary.BigEndian.AppendUint16(nil, 500),
	} {
		if _, err := DecodeStatCache(bad, 1); err == nil {
			t.Fatalf("%x accepted", bad)
		}
	}
	if _, err := DecodeStatCache(good, 2); err == nil {
		t.Fatal("a count beyond the entries accepted")
	}
}

// A scan from a loaded cache reuses every unchanged file and re-reads an
// edited one, in nested directories whose names sort around '/'.
func TestScanFromLoadedStatCache(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"a.md", "a/x.md", "a/b/y.md", "a-b/z.md", "a0/w.md", "ab.md"} {
		writeAged(t, filepath.Join(dir, filepath.FromSlash(p)), p+"\n", time.Hour)
	}
	first := scanDir(t, dir, NewStatCache())
	loaded, err := DecodeStatCache(first.Stats.AppendEntries(nil), first.Stats.Len())
	if err != nil {
		t.Fatal(err)
	}
	second := scanDir(t, dir, loaded)
	if len(second.Content) != 0 || second.Changed || !maps.Equal(second.Files, first.Files) {
		t.Fatalf("unchanged tree re-read %d files (changed %v)", len(second.Content), second.Changed)
	}
	writeAged(t, filepath.Join(dir, "a/b/y.md"), "edited\n", time.Hour)
	if err := os.Remove(filepath.Join(dir, "a0/w.md")); err != nil {
		t.Fatal(err)
	}
	third := scanDir(t, dir, second.Stats)
	if len(third.Content) != 1 || string(third.Content["a/b/y.md"]) != "edited\n" {
		t.Fatalf("read %v, want the edited file only", slices.Collect(maps.Keys(third.Content)))
	}
	if _, ok := third.Stats.Get("a0/w.md"); ok || third.Stats.Len() != 5 {
		t.Fatalf("removed file still cached (%d entries)", third.Stats.Len())
	}
}
