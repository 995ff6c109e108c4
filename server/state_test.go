package server

import (
	"errors"
	"reflect"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
)

func TestBaselineCodec(t *testing.T) {
	b := &baseline{Generation: 42, Head: cas.Sum([]byte("head")), Files: map[string]cas.ID{
		"a.md": cas.Sum([]byte("a")), "dir/ü.md": cas.Sum([]byte("u")),
	}}
	data := encodeBaseline(b)
	got, err := decodeBaseline(data)
	if err != nil || got.Generation != b.Generation || got.Head != b.Head || !reflect.DeepEqual(got.files(), b.Files) {
		t.Fatalf("round trip: %v %+v", err, got)
	}
	for i := range data {
		bad := append([]byte{}, data...)
		bad[i] ^= 0x40
		if _, err := decodeBaseline(bad); !errors.Is(err, errBadStateFile) {
			t.Fatalf("flipped byte %d accepted", i)
		}
	}
	if _, err := decodeBaseline(data[:len(data)-1]); !errors.Is(err, errBadStateFile) {
		t.Fatal("truncated baseline accepted")
	}
	empty := &baseline{Files: map[string]cas.ID{}}
	if got, err := decodeBaseline(encodeBaseline(empty)); err != nil || !reflect.DeepEqual(got.files(), empty.Files) {
		t.Fatalf("empty baseline: %v %+v", err, got)
	}
}

func TestStatCacheCodec(t *testing.T) {
	m := map[string]statEntry{
		"a.md":   {Size: 3, Mtime: -1, Ctime: 7, Ino: 9, Dev: 1, ID: cas.Sum([]byte("a")), Trusted: true, path: "a.md"},
		"b/c.md": {Size: 1 << 40, Mtime: 5, ID: cas.Sum([]byte("c")), Markers: true, path: "b/c.md"},
	}
	data := encodeStatCache(m)
	got, err := decodeStatCache(data)
	if err != nil || !reflect.DeepEqual(got, m) {
		t.Fatalf("round trip: %v %+v", err, got)
	}
	data[len(data)/2] ^= 1
	if _, err := decodeStatCache(data); err == nil {
		t.Fatal("corrupt stat cache accepted")
	}
}

func TestDirStateFiles(t *testing.T) {
	d := dirState{path: t.TempDir()}
	if b, err := d.loadBaseline(); b != nil || err != nil {
		t.Fatalf("fresh state has a baseline: %v %v", b, err)
	}
	if f, _ := d.loadRecovery(); f != nil {
		t.Fatal("fresh state needs recovery")
	}
	if err := d.setRecovery(recoveryFlag{Op: "pull", Stage: "rewrite", RemoteAccepted: "no"}); err != nil {
		t.Fatal(err)
	}
	if f, _ := d.loadRecovery(); f == nil || f.Stage != "rewrite" {
		t.Fatalf("flag %+v", f)
	}
	if err := d.clearRecovery(); err != nil {
		t.Fatal(err)
	}
	if f, _ := d.loadRecovery(); f != nil {
		t.Fatal("flag not cleared")
	}
	if err := d.clearRecovery(); err != nil {
		t.Fatal("clearing twice must be fine")
	}
}
