package cas_test

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
)

// The v1 fixtures in testdata/v1 were written once by this code and are
// never regenerated: later releases must read them as they are (STYLE 8).

// smallVectorObjects returns the small pinned vector objects in name order.
func smallVectorObjects(t *testing.T) []cas.Object {
	objs := vectorObjects(t)
	var names []string
	for name := range objs {
		if name != "file 1 MiB" && name != "file 4096 inline" && name != "file 4097 chunked" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	out := make([]cas.Object, len(names))
	for i, n := range names {
		out[i] = objs[n]
	}
	return out
}

// v1Notebook describes the two commits stored in testdata/v1/store.
type v1Commit struct {
	pack  string
	files map[string][]byte
}

func v1Notebook() []v1Commit {
	big := genText(61, 100<<10)
	return []v1Commit{
		{"1-01890a5d-ac96-774b-bcce-b302099a8057.pack", map[string][]byte{
			"readme.md":    []byte("hello\n"),
			"notes/big.md": big,
		}},
		{"2-01890a5e-0000-7000-8000-000000000002.pack", map[string][]byte{
			"readme.md":      []byte("hello\n"),
			"notes/big.md":   append(big[:len(big):len(big)], genText(62, 1<<10)...),
			"notes/added.md": genText(63, 3000),
		}},
	}
}

var v1Times = []time.Time{
	time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC),
	time.Date(2026, 11, 30, 10, 5, 0, 0, time.UTC),
}

// A store written by format version 1 is read by this release: both
// commits, their trees and every file, with the pinned head IDs.
func TestReadsV1Store(t *testing.T) {
	dir := t.TempDir()
	for _, c := range v1Notebook() {
		data, err := os.ReadFile(filepath.Join("testdata/v1/store", c.pack))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, c.pack), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s := openStore(t, dir)
	heads := []string{
		"b059afc6d5a83f2d8bd60ab3a47fb722bd93a3021c8be8ed683c79a2ff158d03",
		"057ccfbc1908d5ed7f9832b49021fe1db89c81ee4b7ad8c212ea80b74548b119",
	}
	var parent cas.ID
	for i, want := range v1Notebook() {
		head, err := cas.ParseID(heads[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := cas.CheckClosure(s, head); err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
		o, err := s.Get(head)
		if err != nil {
			t.Fatal(err)
		}
		c, err := cas.DecodeCommit(o)
		if err != nil {
			t.Fatal(err)
		}
		if c.Parent != parent || !c.Time.Equal(v1Times[i]) || c.Publication != want.pack[2:38] {
			t.Fatalf("commit %d: parent, time or publication differ: %+v", i, c)
		}
		parent = head
		files, err := cas.ReadTree(s, c.Tree)
		if err != nil {
			t.Fatal(err)
		}
		if len(files) != len(want.files) {
			t.Fatalf("commit %d: %d files, want %d", i, len(files), len(want.files))
		}
		for path, content := range want.files {
			got, err := cas.ReadFile(s, files[path])
			if err != nil || !bytes.Equal(got, content) {
				t.Fatalf("commit %d, %s: %v", i, path, err)
			}
		}
	}
	for _, c := range v1Notebook() {
		if err := s.VerifyPack(c.pack); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReadsV1SmallPack(t *testing.T) {
	data, err := os.ReadFile("testdata/v1/small.pack")
	if err != nil {
		t.Fatal(err)
	}
	p, err := cas.OpenPack(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Verify(); err != nil {
		t.Fatal(err)
	}
	for _, want := range smallVectorObjects(t) {
		got, err := p.Get(want.ID)
		if err != nil || !bytes.Equal(got.Body, want.Body) {
			t.Fatalf("%v object: %v", want.Kind, err)
		}
	}
}
