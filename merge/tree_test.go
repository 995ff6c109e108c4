package merge

import (
	"errors"
	"reflect"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
)

// store is a content-addressed map for tree tests; it counts loads.
type store struct {
	files map[cas.ID][]byte
	loads int
}

func (s *store) id(content string) cas.ID {
	id := cas.Sum([]byte(content))
	if s.files == nil {
		s.files = map[cas.ID][]byte{}
	}
	s.files[id] = []byte(content)
	return id
}

func (s *store) load(id cas.ID) ([]byte, error) {
	s.loads++
	b, ok := s.files[id]
	if !ok {
		return nil, cas.ErrNotFound
	}
	return b, nil
}

// tree builds a Tree from path/content pairs.
func (s *store) tree(kv ...string) Tree {
	t := Tree{}
	for i := 0; i < len(kv); i += 2 {
		t[kv[i]] = s.id(kv[i+1])
	}
	return t
}

// contents renders a result as path -> content for comparison.
func (s *store) contents(t *testing.T, r TreeResult) map[string]string {
	t.Helper()
	out := map[string]string{}
	for p, e := range r.Files {
		if e.ID.IsZero() {
			out[p] = string(e.Content)
			continue
		}
		b, ok := s.files[e.ID]
		if !ok {
			t.Fatalf("%s: unknown ID", p)
		}
		out[p] = string(b)
	}
	return out
}

type conflictView struct {
	path   string
	reason FileReason
	ranges int
}

func conflictViews(cs []Conflict) []conflictView {
	var v []conflictView
	for _, c := range cs {
		v = append(v, conflictView{c.Path, c.Reason, len(c.Ranges)})
	}
	return v
}

func TestTrees(t *testing.T) {
	for _, tc := range []struct {
		name                string
		base, local, remote []string
		want                map[string]string
		conflicts           []conflictView
	}{
		{
			name:   "one-sided change, add and delete are taken",
			base:   []string{"a.md", "a\n", "b.md", "b\n", "c.md", "c\n"},
			local:  []string{"a.md", "A\n", "b.md", "b\n", "c.md", "c\n", "new/l.md", "l\n"},
			remote: []string{"a.md", "a\n", "c.md", "c\n", "r.md", "r\n"},
			want:   map[string]string{"a.md": "A\n", "c.md": "c\n", "new/l.md": "l\n", "r.md": "r\n"},
		},
		{
			name:   "both sides edit one file: text merge",
			base:   []string{"n.md", "1\n2\n3\n4\n"},
			local:  []string{"n.md", "one\n2\n3\n4\n"},
			remote: []string{"n.md", "1\n2\n3\nfour\n"},
			want:   map[string]string{"n.md": "one\n2\n3\nfour\n"},
		},
		{
			name:      "both sides edit one line: TEXT_CONFLICT with ranges",
			base:      []string{"n.md", "1\n2\n"},
			local:     []string{"n.md", "1\nL\n"},
			remote:    []string{"n.md", "1\nR\n"},
			want:      map[string]string{"n.md": "1\n<<<<<<< local\nL\n=======\nR\n>>>>>>> remote\n"},
			conflicts: []conflictView{{"n.md", TextConflict, 1}},
		},
		{
			name:      "local still holding blocks is kept as it is, never merged into nested blocks",
			base:      []string{"n.md", "a\nremote1\n"},
			local:     []string{"n.md", "a\n<<<<<<< local\nlocal1\n=======\nremote1\n>>>>>>> remote\n"},
			remote:    []string{"n.md", "a\nremote1\nremote2\n"},
			want:      map[string]string{"n.md": "a\n<<<<<<< local\nlocal1\n=======\nremote1\n>>>>>>> remote\n"},
			conflicts: []conflictView{{"n.md", Unresolved, 1}},
		},
		{
			name:      "an added local file holding blocks is not merged with the remote's add either",
			local:     []string{"n.md", "<<<<<<< local\nx\n=======\ny\n>>>>>>> remote\n"},
			remote:    []string{"n.md", "z\n"},
			want:      map[string]string{"n.md": "<<<<<<< local\nx\n=======\ny\n>>>>>>> remote\n"},
			conflicts: []conflictView{{"n.md", Unresolved, 1}},
		},
		{
			name:   "a local file holding blocks that the remote did not change is simply kept",
			base:   []string{"n.md", "a\n", "o.md", "o\n"},
			local:  []string{"n.md", "<<<<<<< local\nx\n=======\ny\n>>>>>>> remote\n", "o.md", "o\n"},
			remote: []string{"n.md", "a\n", "o.md", "O\n"},
			want:   map[string]string{"n.md": "<<<<<<< local\nx\n=======\ny\n>>>>>>> remote\n", "o.md": "O\n"},
		},
		{
			name:   "add/add same content is clean",
			local:  []string{"n.md", "same\n"},
			remote: []string{"n.md", "same\n"},
			want:   map[string]string{"n.md": "same\n"},
		},
		{
			// Against an empty base both sides only added lines: the
			// line both files start with once, then remote's own lines,
			// then local's.
			name:   "add/add different content merges on an empty base",
			local:  []string{"n.md", "# T\nmine\n"},
			remote: []string{"n.md", "# T\ntheirs\n"},
			want:   map[string]string{"n.md": "# T\ntheirs\nmine\n"},
		},
		{
			name:   "add/add where one file starts the other: the longer once",
			local:  []string{"n.md", "# T\nmine\n"},
			remote: []string{"n.md", "# T\n"},
			want:   map[string]string{"n.md": "# T\nmine\n"},
		},
		{
			name:      "local modifies, remote deletes: local version kept",
			base:      []string{"n.md", "x\n"},
			local:     []string{"n.md", "x\ny\n"},
			remote:    []string{},
			want:      map[string]string{"n.md": "x\ny\n"},
			conflicts: []conflictView{{"n.md", ModifyDelete, 0}},
		},
		{
			name:      "local deletes, remote modifies: remote version kept",
			base:      []string{"n.md", "x\n"},
			local:     []string{},
			remote:    []string{"n.md", "x\nz\n"},
			want:      map[string]string{"n.md": "x\nz\n"},
			conflicts: []conflictView{{"n.md", ModifyDelete, 0}},
		},
		{
			name:   "delete/delete is clean",
			base:   []string{"n.md", "x\n", "k.md", "k\n"},
			local:  []string{"k.md", "k\n"},
			remote: []string{"k.md", "k\n"},
			want:   map[string]string{"k.md": "k\n"},
		},
		{
			name:   "rename is a delete and an add, merged as such",
			base:   []string{"old.md", "x\n", "k.md", "k\n"},
			local:  []string{"new.md", "x\n", "k.md", "k\n"},
			remote: []string{"old.md", "x\n", "k.md", "K\n"},
			want:   map[string]string{"new.md": "x\n", "k.md": "K\n"},
		},
		{
			name:      "rename on one side, edit on the other: the edit is kept as a modify/delete",
			base:      []string{"old.md", "x\n"},
			local:     []string{"new.md", "x\n"},
			remote:    []string{"old.md", "x\ny\n"},
			want:      map[string]string{"new.md": "x\n", "old.md": "x\ny\n"},
			conflicts: []conflictView{{"old.md", ModifyDelete, 0}},
		},
		{
			name:      "local file where remote made a directory: the file is kept",
			local:     []string{"p", "local file\n"},
			remote:    []string{"p/a.md", "a\n", "p/b.md", "b\n"},
			want:      map[string]string{"p": "local file\n"},
			conflicts: []conflictView{{"p", FileDirectory, 0}, {"p/a.md", FileDirectory, 0}, {"p/b.md", FileDirectory, 0}},
		},
		{
			name:      "local directory where remote made a file: the directory is kept",
			base:      []string{"q.md", "q\n"},
			local:     []string{"p/a.md", "a\n", "q.md", "q\n"},
			remote:    []string{"p", "remote file\n", "q.md", "Q\n"},
			want:      map[string]string{"p/a.md": "a\n", "q.md": "Q\n"},
			conflicts: []conflictView{{"p", FileDirectory, 0}},
		},
		{
			name:   "a file replaced by a directory on one side only is clean",
			base:   []string{"p", "file\n"},
			local:  []string{"p", "file\n"},
			remote: []string{"p/a.md", "a\n"},
			want:   map[string]string{"p/a.md": "a\n"},
		},
		{
			name:      "a sibling that sorts between p and p/ does not hide the clash",
			local:     []string{"p", "f\n", "p.md", "x\n"},
			remote:    []string{"p/a", "a\n", "p.md", "x\n"},
			want:      map[string]string{"p": "f\n", "p.md": "x\n"},
			conflicts: []conflictView{{"p", FileDirectory, 0}, {"p/a", FileDirectory, 0}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &store{}
			res, err := Trees(s.tree(tc.base...), s.tree(tc.local...), s.tree(tc.remote...), s.load)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.contents(t, res); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("files %q, want %q", got, tc.want)
			}
			if got := conflictViews(res.Conflicts); !reflect.DeepEqual(got, tc.conflicts) {
				t.Errorf("conflicts %v, want %v", got, tc.conflicts)
			}
		})
	}
}

// Only a path both sides changed is loaded; an unchanged or one-sided file
// keeps its ID and is never read.
func TestTreesLoadOnlyWhatTheyMerge(t *testing.T) {
	s := &store{}
	base := s.tree("a", "a\n", "b", "b\n", "c", "1\n2\n3\n")
	local := s.tree("a", "A\n", "b", "b\n", "c", "one\n2\n3\n")
	remote := s.tree("a", "a\n", "b", "B\n", "c", "1\n2\nthree\n")
	res, err := Trees(base, local, remote, s.load)
	if err != nil {
		t.Fatal(err)
	}
	if s.loads != 3 {
		t.Errorf("%d loads, want 3 (the three versions of c)", s.loads)
	}
	if res.Files["a"].ID != local["a"] || res.Files["b"].ID != remote["b"] || !res.Files["c"].ID.IsZero() {
		t.Errorf("entries %+v", res.Files)
	}
}

func TestTreesLoadErrorIsReturned(t *testing.T) {
	s := &store{}
	base, local, remote := s.tree("n", "1\n"), s.tree("n", "2\n"), Tree{"n": cas.Sum([]byte("never stored"))}
	if _, err := Trees(base, local, remote, s.load); !errors.Is(err, cas.ErrNotFound) {
		t.Fatalf("err %v, want cas.ErrNotFound", err)
	}
}
