package cas_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
)

// notebook writes a commit over a few files (one chunked, one shared by two
// paths) into m and returns the commit and its decoded parts.
func notebook(t *testing.T, m *cas.ObjectSet) (commit cas.ID, big cas.File, bigID cas.ID) {
	t.Helper()
	bigID = mustFile(t, m, genText(31, 200<<10))
	small := mustFile(t, m, []byte("small\n"))
	root, err := cas.WriteTree(m, map[string]cas.ID{
		"big.md":        bigID,
		"a/small.md":    small,
		"b/c/small.md":  small,
		"b/c/other.md":  mustFile(t, m, []byte("other\n")),
		"b/copy/big.md": bigID,
	})
	if err != nil {
		t.Fatal(err)
	}
	c := cas.EncodeCommit(cas.Commit{Tree: root, Parent: cas.Sum([]byte("a parent not in m")), Message: []byte("x")})
	mustPut(t, m, c)
	o, _ := m.Get(bigID)
	big, err = cas.DecodeFile(o)
	if err != nil {
		t.Fatal(err)
	}
	return c.ID, big, bigID
}

// A complete closure passes although the parent commit is absent: the
// check covers one commit's state, not its history.
func TestCheckClosureComplete(t *testing.T) {
	m := cas.NewObjectSet()
	commit, _, _ := notebook(t, m)
	if err := cas.CheckClosure(m, commit); err != nil {
		t.Fatal(err)
	}
}

func TestCheckClosureReportsEachMissingObject(t *testing.T) {
	probe := cas.NewObjectSet()
	commit, _, _ := notebook(t, probe)
	for _, id := range probe.IDs() {
		m := cas.NewObjectSet()
		notebook(t, m)
		m.Delete(id)
		if err := cas.CheckClosure(m, commit); !errors.Is(err, cas.ErrNotFound) {
			o, _ := probe.Get(id)
			t.Fatalf("%v object missing: CheckClosure error = %v, want ErrNotFound", o.Kind, err)
		}
	}
}

func TestCheckClosureRefusesNonCommit(t *testing.T) {
	m := cas.NewObjectSet()
	_, _, bigID := notebook(t, m)
	if err := cas.CheckClosure(m, bigID); !errors.Is(err, cas.ErrCorrupt) {
		t.Fatalf("CheckClosure(file) error = %v, want ErrCorrupt", err)
	}
}

// lyingSource returns a different, valid object for one ID: a Source bug
// or a hash collision must not pass as the requested object.
type lyingSource struct {
	*cas.ObjectSet
	victim cas.ID
	swap   cas.Object
}

func (s lyingSource) Get(id cas.ID) (cas.Object, error) {
	if id == s.victim {
		return s.swap, nil
	}
	return s.ObjectSet.Get(id)
}

func TestCheckClosureDetectsWrongObject(t *testing.T) {
	m := cas.NewObjectSet()
	commit, big, _ := notebook(t, m)
	src := lyingSource{ObjectSet: m, victim: big.Chunks[2].ID, swap: mustChunk(t, []byte("other"))}
	if err := cas.CheckClosure(src, commit); !errors.Is(err, cas.ErrCorrupt) {
		t.Fatalf("CheckClosure error = %v, want ErrCorrupt", err)
	}
}

// Through a Store, a damaged chunk on disk is reported as corrupt, and the
// error names the file's path, never an object ID (IDs stay inside the
// process).
func TestCheckClosureThroughDamagedStore(t *testing.T) {
	m := cas.NewObjectSet()
	commit, big, _ := notebook(t, m)
	w := cas.NewPackWriter()
	for _, id := range m.IDs() {
		o, _ := m.Get(id)
		mustPut(t, w, o)
	}
	data, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	victim := big.Chunks[1].ID
	bad := bytes.Clone(data)
	bad[recordOffset(t, data, victim)+42+5] ^= 0x20 // inside the stored bytes
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.pack"), bad, 0o600); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, dir)
	err = cas.CheckClosure(s, commit)
	if !errors.Is(err, cas.ErrCorrupt) {
		t.Fatalf("CheckClosure error = %v, want ErrCorrupt", err)
	}
	if strings.Contains(err.Error(), victim.String()) || strings.Contains(err.Error(), commit.String()) {
		t.Fatalf("error %q carries an object ID", err)
	}
}
