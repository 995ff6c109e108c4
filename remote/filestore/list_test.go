package filestore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/slivingdoc/slivingdoc/remote"
)

// BenchmarkListAfterProposals is a commit's listing of `proposals/` in a
// notebook of long history: every accepted proposal stays, and only the
// few after the commit's base are wanted.
func BenchmarkListAfterProposals(b *testing.B) {
	for _, n := range []int{500, 5000} {
		b.Run(fmt.Sprintf("proposals=%d", n), func(b *testing.B) {
			s, err := New(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			for i := range n {
				if err := s.Put(ctx, fmt.Sprintf("proposals/%020d-p", i), []byte("x")); err != nil {
					b.Fatal(err)
				}
			}
			after := fmt.Sprintf("proposals/%020d~", n-3)
			b.ResetTimer()
			for range b.N {
				objs, err := remote.ListAfter(ctx, s, "proposals/", after)
				if err != nil || len(objs) != 2 {
					b.Fatalf("%d objects, %v", len(objs), err)
				}
			}
		})
	}
}

// A listing walks only what can hold its keys, and leaves out the same
// keys whether a directory is walked or passed over: nested directories
// before, at and after the key given, private entries at any depth, and
// a prefix whose directory is an object.
func TestListAfterNestedAndPrivate(t *testing.T) {
	dir := t.TempDir()
	s, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	keys := []string{"p/a/1", "p/b/1", "p/b/2", "p/c/d/1", "p/e", "pq/1", "obj"}
	for _, k := range keys {
		if err := s.Put(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"p/.hidden/1", "p/b/.lock", "p/c/.tmp/x"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		prefix, after string
		want          []string
	}{
		{"p/", "", []string{"p/a/1", "p/b/1", "p/b/2", "p/c/d/1", "p/e"}},
		{"p", "", []string{"p/a/1", "p/b/1", "p/b/2", "p/c/d/1", "p/e", "pq/1"}},
		{"p/", "p/b/", []string{"p/b/1", "p/b/2", "p/c/d/1", "p/e"}},
		{"p/", "p/b/1", []string{"p/b/2", "p/c/d/1", "p/e"}},
		{"p/", "p/b~", []string{"p/c/d/1", "p/e"}},
		{"p/c/", "p/a", []string{"p/c/d/1"}},
		{"", "p/e", []string{"pq/1"}},
		{"obj/", "", nil},
		{"none/", "", nil},
	} {
		objs, err := remote.ListAfter(ctx, s, tc.prefix, tc.after)
		if err != nil {
			t.Fatalf("ListAfter(%q, %q): %v", tc.prefix, tc.after, err)
		}
		var got []string
		for _, o := range objs {
			got = append(got, o.Key)
			if o.Size != int64(len(o.Key)) {
				t.Fatalf("%s: size %d", o.Key, o.Size)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Fatalf("ListAfter(%q, %q) = %v, want %v", tc.prefix, tc.after, got, tc.want)
		}
	}
}
