package fuzz

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
)

// FuzzDecodeObject: no body makes the object decoder panic, and whatever
// decodes re-encodes to the same bytes (there is one encoding per value).
func FuzzDecodeObject(f *testing.F) {
	m := cas.NewObjectSet()
	hello, _ := cas.WriteFile(m, []byte("hello\n"))
	big, _ := cas.WriteFile(m, bytes.Repeat([]byte("a line of text\n"), 2000))
	root, _ := cas.WriteTree(m, map[string]cas.ID{"a/hello.md": hello, "big.md": big})
	commit := cas.EncodeCommit(cas.Commit{Tree: root, Parent: hello, Publication: "p", Time: time.Unix(1e9, 0), Message: []byte("m")})
	f.Add(commit.Body)
	for _, id := range m.IDs() {
		o, _ := m.Get(id)
		f.Add(o.Body)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		o, err := cas.DecodeObject(body)
		if err != nil {
			if !errors.Is(err, cas.ErrCorrupt) {
				t.Fatalf("DecodeObject error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		if o.ID != cas.Sum(body) || o.Kind != cas.Kind(body[0]) {
			t.Fatal("decoded object has the wrong ID or kind")
		}
		var again cas.Object
		switch o.Kind {
		case cas.KindChunk:
			data, err := cas.DecodeChunk(o)
			if err != nil {
				t.Fatal(err)
			}
			again, err = cas.ChunkObject(data)
			if err != nil {
				t.Fatal(err)
			}
		case cas.KindFile:
			fl, err := cas.DecodeFile(o)
			if err != nil {
				t.Fatal(err)
			}
			if again, err = cas.EncodeFile(fl); err != nil {
				t.Fatal(err)
			}
		case cas.KindTree:
			entries, err := cas.DecodeTree(o)
			if err != nil {
				t.Fatal(err)
			}
			if again, err = cas.EncodeTree(entries); err != nil {
				t.Fatal(err)
			}
		case cas.KindCommit:
			c, err := cas.DecodeCommit(o)
			if err != nil {
				t.Fatal(err)
			}
			again = cas.EncodeCommit(c)
		default:
			t.Fatalf("decoded unknown kind %v", o.Kind)
		}
		if !bytes.Equal(again.Body, body) || again.ID != o.ID {
			t.Fatalf("%v object does not re-encode to the same bytes", o.Kind)
		}
	})
}
