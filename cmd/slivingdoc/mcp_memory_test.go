package main

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A long-lived serve keeps directory listings and the stat cache between
// calls (server/dirstate). Whatever happens to the directory between two
// calls must still be seen: the user's edits that keep size and mtime, a
// file replaced by rename, two edits within one timestamp tick, another
// process committing or pulling in the same directory, the stat cache in
// P replaced by an older copy, a directory replaced by another.
func TestServeNoticesChangesBetweenCalls(t *testing.T) {
	forEachBackend(t, func(t *testing.T, nb *notebook) {
		a, b := nb.agent("a"), nb.agent("b")
		s := a.serve()
		s.pull()
		age := func(rel string) time.Time {
			old := time.Now().Add(-time.Hour).Truncate(time.Second)
			if err := os.Chtimes(filepath.Join(a.dir, filepath.FromSlash(rel)), old, old); err != nil {
				t.Fatal(err)
			}
			return old
		}
		a.write("sub/one.md", "one\n")
		a.write("two.md", "two\n")
		age("sub/one.md")
		age("two.md")
		gen := generation(s.mustOK("notes_commit", s.commit("seed")))
		s.mustOK("notes_pull", s.pull()) // the listings are remembered from here on
		committed := func(what string, want map[string][2]int) {
			t.Helper()
			r := s.mustOK("notes_commit", s.commit(what))
			if got := fileStats(r); !maps.Equal(got, want) {
				t.Fatalf("%s: published %v, want %v (%s)", what, got, want, r.raw)
			}
			if want != nil {
				gen++
			}
			if generation(r) != gen {
				t.Fatalf("%s: generation %d, want %d", what, generation(r), gen)
			}
		}

		// Same size, mtime put back.
		a.write("sub/one.md", "ONE\n")
		age("sub/one.md")
		committed("same size and mtime", map[string][2]int{"sub/one.md": {1, 1}})

		// Replaced by a rename, same size and mtime.
		tmp := filepath.Join(filepath.Dir(a.dir), "replacement")
		os.WriteFile(tmp, []byte("0NE\n"), 0o644)
		old := time.Now().Add(-time.Hour).Truncate(time.Second)
		os.Chtimes(tmp, old, old)
		if err := os.Rename(tmp, filepath.Join(a.dir, "sub", "one.md")); err != nil {
			t.Fatal(err)
		}
		committed("replaced by rename", map[string][2]int{"sub/one.md": {1, 1}})

		// Two edits in one timestamp tick: the second keeps size and mtime
		// and comes right after the commit read the first.
		a.write("hot.md", "v1\n")
		fi, _ := os.Stat(filepath.Join(a.dir, "hot.md"))
		committed("first edit", map[string][2]int{"hot.md": {1, 0}})
		a.write("hot.md", "v2\n")
		os.Chtimes(filepath.Join(a.dir, "hot.md"), fi.ModTime(), fi.ModTime())
		committed("second edit in the same tick", map[string][2]int{"hot.md": {1, 1}})

		// Keep the stat cache as it is now, to put it back later.
		cache := statCacheFile(t, a.priv)
		saved, err := os.ReadFile(cache)
		if err != nil {
			t.Fatal(err)
		}

		// Another process commits in the same directory: serve has nothing
		// left to publish, and its next edit is published on top.
		a.write("cli.md", "from the CLI\n")
		if r := a.commit("by the CLI"); r.generation != gen+1 {
			t.Fatalf("CLI commit: generation %d, want %d", r.generation, gen+1)
		}
		gen++
		committed("nothing after the CLI's commit", nil)
		a.write("two.md", "two\nand more\n")
		committed("after the CLI's commit", map[string][2]int{"two.md": {1, 0}})

		// Another process pulls into the same directory (b's edit arrives
		// through the CLI): serve takes none of it for a local change.
		b.pull()
		b.write("two.md", "two\nand more\nfrom b\n")
		if r := b.commit("b's edit"); r.generation != gen+1 {
			t.Fatalf("b: generation %d", r.generation)
		}
		gen++
		a.pull()
		committed("nothing after the CLI's pull", nil)
		if got := a.read("two.md"); got != "two\nand more\nfrom b\n" {
			t.Fatalf("two.md after the CLI's pull: %q", got)
		}

		// The stat cache in P replaced by an older copy: still nothing to
		// publish, and an edit is still seen.
		if err := os.WriteFile(cache, saved, 0o600); err != nil {
			t.Fatal(err)
		}
		committed("nothing after the stat cache was replaced", nil)
		a.write("sub/one.md", "one again\n")
		committed("after the stat cache was replaced", map[string][2]int{"sub/one.md": {1, 1}})

		// A directory replaced by another of the same name.
		if err := os.Rename(filepath.Join(a.dir, "sub"), filepath.Join(filepath.Dir(a.dir), "old-sub")); err != nil {
			t.Fatal(err)
		}
		a.write("sub/other.md", "other\n")
		committed("directory replaced", map[string][2]int{"sub/one.md": {0, 1}, "sub/other.md": {1, 0}})

		// Whatever serve published is what a fresh directory gets.
		c := nb.agent("c")
		c.pull()
		if got, want := c.files(), a.files(); !maps.Equal(got, want) {
			t.Fatalf("a fresh pull: %q, a holds %q", got, want)
		}
		if r := s.mustOK("notes_pull", s.pull()); generation(r) != gen || len(r.files()) != 0 {
			t.Fatalf("final pull: %s", r.raw)
		}
	})
}

// statCacheFile finds the one stat cache under a private root.
func statCacheFile(t *testing.T, priv string) string {
	t.Helper()
	var found []string
	filepath.WalkDir(priv, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "statcache" {
			found = append(found, p)
		}
		return nil
	})
	if len(found) != 1 {
		t.Fatalf("stat caches under the private root: %v", found)
	}
	return found[0]
}
