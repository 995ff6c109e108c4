package cas_test

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
)

// UpdateTree gives exactly the root WriteTree gives for the changed flat
// map, puts what a reader of the result needs beyond the base, and leaves
// unchanged subtrees alone.
func TestUpdateTreeMatchesWriteTree(t *testing.T) {
	x := xorshift(7)
	fileID := func(i uint64) cas.ID { return cas.Sum(fmt.Appendf(nil, "content %d", i)) }
	paths := []string{}
	for i := range 60 {
		paths = append(paths, fmt.Sprintf("d%d/s%d/n%d.md", i%4, i%3, i), fmt.Sprintf("top%d.md", i%9), fmt.Sprintf("d%d/f%d", i%5, i%4),
			fmt.Sprintf("d%d/s%d", i%4, i%3)) // a file where a directory may be
	}
	for round := range 200 {
		base := map[string]cas.ID{}
		for _, p := range paths {
			if x.next()%3 == 0 {
				base[p] = fileID(x.next())
			}
		}
		dropConflicting(base, &x)
		want := maps.Clone(base)
		changes := map[string]cas.ID{}
		for range 1 + x.next()%6 {
			p := paths[x.next()%uint64(len(paths))]
			if _, ok := want[p]; ok && x.next()%2 == 0 {
				delete(want, p)
				if _, inBase := base[p]; inBase {
					changes[p] = cas.ID{}
				} else {
					delete(changes, p) // added earlier in this round
				}
				continue
			}
			want[p] = fileID(x.next())
			changes[p] = want[p]
		}
		// A path that became both a file and a directory: make the change
		// set consistent the way a real tree is, by removing the others.
		for p := range dropConflicting(want, &x) {
			if _, inBase := base[p]; inBase {
				changes[p] = cas.ID{}
			} else {
				delete(changes, p)
			}
		}
		store := cas.NewObjectSet()
		baseRoot, err := cas.WriteTree(store, base)
		if err != nil {
			t.Fatal(err)
		}
		if len(base) == 0 && round%2 == 0 {
			baseRoot = cas.ID{} // a zero base is the empty tree
		}
		wantRoot, err := cas.WriteTree(nil, want)
		if err != nil {
			t.Fatal(err)
		}
		sink := cas.NewObjectSet()
		got, err := cas.UpdateTree(store, sink, baseRoot, changes)
		if err != nil {
			t.Fatalf("round %d: UpdateTree: %v", round, err)
		}
		if got != wantRoot {
			t.Fatalf("round %d: UpdateTree root differs from WriteTree's", round)
		}
		// The sink plus the base store hold the whole new tree.
		files, err := cas.ReadTree(sources{sink, store}, got)
		if err != nil || !maps.Equal(files, want) {
			t.Fatalf("round %d: ReadTree of the result: %v (%d files, want %d)", round, err, len(files), len(want))
		}
	}
}

// Unchanged directories are neither read nor rewritten.
func TestUpdateTreeTouchesOnlyChangedDirectories(t *testing.T) {
	files := map[string]cas.ID{}
	for i := range 1000 {
		files[fmt.Sprintf("d%02d/n%04d.md", i/100, i)] = cas.Sum(fmt.Appendf(nil, "%d", i))
	}
	store := cas.NewObjectSet()
	root, err := cas.WriteTree(store, files)
	if err != nil {
		t.Fatal(err)
	}
	counting := &countingSource{src: store}
	sink := cas.NewObjectSet()
	changed := map[string]cas.ID{"d03/n0300.md": cas.Sum([]byte("new"))}
	if _, err := cas.UpdateTree(counting, sink, root, changed); err != nil {
		t.Fatal(err)
	}
	if counting.gets != 2 || sink.Len() != 2 {
		t.Fatalf("read %d trees and wrote %d, want 2 and 2 (the root and d03)", counting.gets, sink.Len())
	}
}

// Changes that do not fit the base are refused, not guessed at.
func TestUpdateTreeRefusesChangesThatDoNotFitTheBase(t *testing.T) {
	store := cas.NewObjectSet()
	id := cas.Sum([]byte("x"))
	root, err := cas.WriteTree(store, map[string]cas.ID{"a/b": id, "c": id})
	if err != nil {
		t.Fatal(err)
	}
	for name, changes := range map[string]map[string]cas.ID{
		"remove a missing file":      {"nope": {}},
		"remove a directory":         {"a": {}},
		"file over a directory":      {"a": id},
		"directory under a file":     {"c/d": id},
		"invalid name":               {"a/../b": id},
		"remove below a file":        {"c/d": {}},
		"file and directory at once": {"x": id, "x/y": id},
	} {
		if _, err := cas.UpdateTree(store, nil, root, changes); !errors.Is(err, cas.ErrInvalidPath) {
			t.Errorf("%s: error = %v, want ErrInvalidPath", name, err)
		}
	}
	if _, err := cas.UpdateTree(cas.NewObjectSet(), nil, root, map[string]cas.ID{"c": {}}); !errors.Is(err, cas.ErrNotFound) {
		t.Errorf("base tree missing from the source: error = %v, want ErrNotFound", err)
	}
}

// dropConflicting makes m a valid tree (a file cannot also be a
// directory): of a file and the paths below it, it keeps either the file
// or the paths below, by coin flip. It returns the removed paths.
func dropConflicting(m map[string]cas.ID, x *xorshift) map[string]bool {
	removed := map[string]bool{}
	for _, p := range slices.Sorted(maps.Keys(m)) {
		if removed[p] {
			continue
		}
		var below []string
		for q := range m {
			if len(q) > len(p) && q[:len(p)] == p && q[len(p)] == '/' {
				below = append(below, q)
			}
		}
		if len(below) == 0 {
			continue
		}
		if x.next()%2 == 0 {
			removed[p] = true
			continue
		}
		for _, q := range below {
			removed[q] = true
		}
	}
	for p := range removed {
		delete(m, p)
	}
	return removed
}

// sources reads from the first source that has the object.
type sources []cas.Source

func (s sources) Get(id cas.ID) (cas.Object, error) {
	for _, src := range s {
		if o, err := src.Get(id); err == nil {
			return o, nil
		}
	}
	return cas.Object{}, cas.ErrNotFound
}

type countingSource struct {
	src  cas.Source
	gets int
}

func (c *countingSource) Get(id cas.ID) (cas.Object, error) {
	c.gets++
	return c.src.Get(id)
}
