package cas_test

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
)

func TestCommitRoundTrip(t *testing.T) {
	in := cas.Commit{
		Tree:        cas.Sum([]byte("tree")),
		Parent:      cas.Sum([]byte("parent")),
		Publication: "01890a5d-ac96-774b-bcce-b302099a8057",
		Time:        time.Date(2026, 11, 30, 12, 0, 1, 999_999_999, time.FixedZone("X", 3600)),
		Message:     []byte("message\nwith lines"),
	}
	o := cas.EncodeCommit(in)
	if o.Kind != cas.KindCommit || o.ID != cas.Sum(o.Body) {
		t.Fatal("EncodeCommit returned an inconsistent object")
	}
	out, err := cas.DecodeCommit(o)
	if err != nil {
		t.Fatal(err)
	}
	wantTime := time.Date(2026, 11, 30, 11, 0, 1, 0, time.UTC)
	if out.Tree != in.Tree || out.Parent != in.Parent || out.Publication != in.Publication ||
		!bytes.Equal(out.Message, in.Message) || !out.Time.Equal(wantTime) || out.Time.Location() != time.UTC {
		t.Fatalf("round trip: got %+v", out)
	}
	// The encoding depends on the instant, not on the zone or sub-seconds.
	same := in
	same.Time = wantTime
	if cas.EncodeCommit(same).ID != o.ID {
		t.Fatal("the same second in another zone gave another commit ID")
	}
}

func TestDecodeCommitRefuses(t *testing.T) {
	good := cas.EncodeCommit(cas.Commit{Tree: cas.Sum([]byte("t")), Message: []byte("m")})
	zeroTree := cas.EncodeCommit(cas.Commit{Message: []byte("m")})
	cases := map[string]cas.Object{
		"a file object": mustChunkAsObject(t),
		"zero tree":     zeroTree,
		"trailing byte": {Kind: cas.KindCommit, Body: append(bytes.Clone(good.Body), 0)},
		"cut message":   {Kind: cas.KindCommit, Body: good.Body[:len(good.Body)-1]},
	}
	for name, o := range cases {
		if _, err := cas.DecodeCommit(o); !errors.Is(err, cas.ErrCorrupt) {
			t.Errorf("%s: DecodeCommit error = %v, want ErrCorrupt", name, err)
		}
	}
}

func mustChunkAsObject(t *testing.T) cas.Object {
	o, err := cas.EncodeFile(cas.File{Size: 1, Inline: []byte("x")})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// ReadCommit is Get then DecodeCommit: the store's absence stays
// ErrNotFound (callers treat a missing commit apart from a corrupt one),
// another kind of object is ErrCorrupt.
func TestReadCommit(t *testing.T) {
	set := cas.NewObjectSet()
	want := cas.Commit{Tree: cas.Sum([]byte("t")), Message: []byte("m")}
	c := cas.EncodeCommit(want)
	file := mustChunkAsObject(t)
	for _, o := range []cas.Object{c, file} {
		if err := set.Put(o); err != nil {
			t.Fatal(err)
		}
	}
	got, err := cas.ReadCommit(set, c.ID)
	if err != nil || got.Tree != want.Tree || !bytes.Equal(got.Message, want.Message) {
		t.Fatalf("ReadCommit of a stored commit = %+v, %v", got, err)
	}
	if _, err := cas.ReadCommit(set, cas.Sum([]byte("absent"))); !errors.Is(err, cas.ErrNotFound) {
		t.Errorf("ReadCommit of an absent ID: error %v, want ErrNotFound", err)
	}
	if _, err := cas.ReadCommit(set, file.ID); !errors.Is(err, cas.ErrCorrupt) {
		t.Errorf("ReadCommit of a file object: error %v, want ErrCorrupt", err)
	}
}
