package pstate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
)

// The JSON records of P keep the bytes earlier versions wrote and read:
// the pending record (its in-memory base never encoded), the "where"
// record and the remembered store; the store-id record is a sealed line.
func TestRecordFormats(t *testing.T) {
	d := Dir{Path: t.TempDir(), L: "/w/nb", Store: "k1"}
	rec := &PendingRecord{BaseHead: "ab", Entries: []PendingEntry{{
		Publication: "p1", Overlay: map[string]string{"a.md": "", "b.md": "cd"},
		Bases: map[string][]byte{"b.md": []byte("x\n")}, V4: true, First: 3, Last: 4, Base: cas.Sum([]byte("h")),
	}}}
	if err := d.SavePending(rec); err != nil {
		t.Fatal(err)
	}
	want := `{"baseHead":"ab","entries":[{"publication":"p1","overlay":{"a.md":"","b.md":"cd"},"bases":{"b.md":"eAo="},"v4":true,"first":3,"last":4}]}`
	if got, _ := os.ReadFile(d.File("pending")); string(got) != want {
		t.Fatalf("pending record:\n got  %s\n want %s", got, want)
	}
	if got, err := d.LoadPending(); err != nil || got.Entries[0].Last != 4 || !got.Entries[0].Base.IsZero() {
		t.Fatalf("pending record read back: %+v %v", got, err)
	}
	if err := d.RemovePending(); err != nil {
		t.Fatal(err)
	}
	if got, err := d.LoadPending(); got != nil || err != nil {
		t.Fatalf("removed pending record read as %+v %v", got, err)
	}
	if err := os.WriteFile(d.File("pending"), []byte(`{"baseHead":`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := d.LoadPending(); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a torn pending record: %v", err)
	}

	if err := d.RecordWhere(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(d.File("where")); string(got) != `{"dir":"/w/nb","store":"k1"}` {
		t.Fatalf("where record %s", got)
	}
	if w, ok := d.Where(); !ok || w.Dir != "/w/nb" || !d.PulledBefore() {
		t.Fatalf("where read back: %+v %v", w, ok)
	}

	priv := t.TempDir()
	r := Remembered{Dir: "/w/nb", Identity: "file:///s", StoreID: "", Locator: "file:///s"}
	if err := WriteRemembered(priv, r); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(priv, "remotes", HashKey("/w/nb"))); string(got) != `{"dir":"/w/nb","identity":"file:///s","storeId":"","locator":"file:///s"}` {
		t.Fatalf("remembered store %s", got)
	}
	if got, ok := ReadRemembered(priv, "/w/nb"); !ok || got != r {
		t.Fatalf("remembered store read back: %+v %v", got, ok)
	}
	if _, ok := ReadRemembered(priv, "/w/other"); ok {
		t.Fatal("another directory's record read")
	}

	urlKey := HashKey("file:///s")
	if err := WriteStoreID(priv, urlKey, "", urlKey); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(priv, "stores", urlKey, "store-id")); string(got) != string(Seal("-", urlKey)) {
		t.Fatalf("store-id record %q", got)
	}
	if id, key, ok := ReadStoreID(priv, urlKey); !ok || id != "" || key != urlKey {
		t.Fatalf("store-id read back: %q %q %v", id, key, ok)
	}
	if _, _, ok := ReadStoreID(priv, HashKey("file:///other")); ok {
		t.Fatal("a store-id record read where none was written")
	}
}

// One holder of a directory's lock at a time; a waiter honours its
// context, and the lock is free again once released.
func TestLock(t *testing.T) {
	d := Dir{Path: filepath.Join(t.TempDir(), "dirs", "h")}
	l, err := d.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := TryLock(d.File("lock")); !errors.Is(err, ErrLocked) {
		t.Fatalf("a second holder: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.Lock(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled wait: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	again, err := TryLock(d.File("lock"))
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	again.Release()
}
