package pstate

import (
	"errors"
	"maps"
	"reflect"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/server/workdir"
)

func TestBaselineCodec(t *testing.T) {
	b := &Baseline{Generation: 42, Head: cas.Sum([]byte("head")), Files: map[string]cas.ID{
		"a.md": cas.Sum([]byte("a")), "dir/ü.md": cas.Sum([]byte("u")),
	}}
	data := encodeBaseline(b)
	got, err := DecodeBaseline(data)
	if err != nil || got.Generation != b.Generation || got.Head != b.Head || !reflect.DeepEqual(got.Tree(), b.Files) {
		t.Fatalf("round trip: %v %+v", err, got)
	}
	for i := range data {
		bad := append([]byte{}, data...)
		bad[i] ^= 0x40
		if _, err := DecodeBaseline(bad); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("flipped byte %d accepted", i)
		}
	}
	if _, err := DecodeBaseline(data[:len(data)-1]); !errors.Is(err, ErrCorrupt) {
		t.Fatal("truncated baseline accepted")
	}
	empty := &Baseline{Files: map[string]cas.ID{}}
	if got, err := DecodeBaseline(encodeBaseline(empty)); err != nil || !reflect.DeepEqual(got.Tree(), empty.Files) {
		t.Fatalf("empty baseline: %v %+v", err, got)
	}
}

func TestStatCacheCodec(t *testing.T) {
	want := map[string]workdir.Entry{
		"a.md":   {Size: 3, Mtime: -1, Ctime: 7, Ino: 9, Dev: 1, ID: cas.Sum([]byte("a")), Trusted: true, Key: "a.md"},
		"b/c.md": {Size: 1 << 40, Mtime: 5, ID: cas.Sum([]byte("c")), Markers: true, Key: "b/c.md"},
	}
	m := workdir.NewStatCache()
	for p, e := range want {
		m.Set(p, e)
	}
	data := encodeStatCache(m)
	got, err := decodeStatCache(data)
	if err != nil {
		t.Fatal(err)
	}
	if all := maps.Collect(got.All()); !reflect.DeepEqual(all, want) {
		t.Fatalf("round trip: %+v", all)
	}
	data[len(data)/2] ^= 1
	if _, err := decodeStatCache(data); err == nil {
		t.Fatal("corrupt stat cache accepted")
	}
}

// A commit that changes files but no path rewrites the stat cache in
// place (no file created); a write torn by a crash is no cache, never a
// wrong one; and its identity, which a long-lived engine checks before
// reusing what it kept, tells two versions of one length apart even when
// the file's times do not.
// A stat cache written in map order (as before the entries were sorted)
// is still read whole, and the next save writes it in order.
func TestStatCacheInMapOrderIsRead(t *testing.T) {
	a := workdir.Entry{Size: 1, Mtime: 2, ID: cas.Sum([]byte("a")), Trusted: true}
	z := workdir.Entry{Size: 3, Mtime: 4, ID: cas.Sum([]byte("z"))}
	var body []byte
	for _, p := range []string{"z.md", "a.md"} { // out of order
		e := a
		if p == "z.md" {
			e = z
		}
		one := workdir.NewStatCache()
		one.Set(p, e)
		body = one.AppendEntries(body)
	}
	data := append([]byte(statCacheMagic), 0, 0, 0, 2)
	data = append(data, body...)
	sum := cas.Sum(data)
	data = append(data, sum[:]...)
	got, err := decodeStatCache(data)
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := got.Get("z.md"); !ok || e.ID != z.ID || got.Len() != 2 {
		t.Fatalf("z.md: %+v %v, %d entries", e, ok, got.Len())
	}
	again, err := decodeStatCache(encodeStatCache(got))
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for p := range again.All() {
		order = append(order, p)
	}
	if !reflect.DeepEqual(order, []string{"a.md", "z.md"}) {
		t.Fatalf("saved in the order %v", order)
	}
}

func TestDirStateFiles(t *testing.T) {
	d := Dir{Path: t.TempDir()}
	if b, err := d.OpenBaseline(); b != nil || err != nil {
		t.Fatalf("fresh state has a baseline: %v %v", b, err)
	}
	if f, _ := d.LoadRecovery(); f != nil {
		t.Fatal("fresh state needs recovery")
	}
	if err := d.SetRecovery(RecoveryFlag{Op: "pull", Stage: "rewrite", RemoteAccepted: "no"}); err != nil {
		t.Fatal(err)
	}
	if f, _ := d.LoadRecovery(); f == nil || f.Stage != "rewrite" {
		t.Fatalf("flag %+v", f)
	}
	if err := d.ClearRecovery(); err != nil {
		t.Fatal(err)
	}
	if f, _ := d.LoadRecovery(); f != nil {
		t.Fatal("flag not cleared")
	}
	if err := d.ClearRecovery(); err != nil {
		t.Fatal("clearing twice must be fine")
	}
}

// A baseline with held paths is SLDBASE2 and round-trips them; one without
// stays SLDBASE1, byte for byte what earlier versions read and wrote.
func TestBaselineHeldCodec(t *testing.T) {
	files := map[string]cas.ID{"a.md": cas.Sum([]byte("a")), "held.md": cas.Sum([]byte("old base"))}
	b := &Baseline{Generation: 7, Head: cas.Sum([]byte("h")), Files: files,
		Held: map[string]cas.ID{"held.md": cas.Sum([]byte("head's version")), "gone.md": {}}}
	data := encodeBaseline(b)
	if string(data[:8]) != baselineHeldMagic {
		t.Fatalf("magic %q", data[:8])
	}
	got, err := DecodeBaseline(data)
	if err != nil || got.Exact() || !reflect.DeepEqual(got.Tree(), files) || !reflect.DeepEqual(got.Held, b.Held) {
		t.Fatalf("round trip: %v %+v", err, got)
	}
	head := got.HeadTree()
	if head["held.md"] != b.Held["held.md"] || head["a.md"] != files["a.md"] {
		t.Fatalf("head files %v", head)
	}
	if _, ok := head["gone.md"]; ok {
		t.Fatal("a held path absent from the head is in its tree")
	}
	for i := range data {
		bad := append([]byte{}, data...)
		bad[i] ^= 0x40
		if _, err := DecodeBaseline(bad); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("flipped byte %d accepted", i)
		}
	}
	plain := encodeBaseline(&Baseline{Generation: 7, Head: b.Head, Files: files})
	if string(plain[:8]) != baselineMagic {
		t.Fatalf("a baseline without held paths is %q", plain[:8])
	}
}

func TestRewriteRecordCodec(t *testing.T) {
	r := &RewriteRecord{NextSum: cas.Sum([]byte("next")),
		Entries: []RewriteEntry{
			{Path: "a.md", Before: cas.Sum([]byte("1")), After: cas.Sum([]byte("2")), BaseBefore: cas.Sum([]byte("0"))},
			{Path: "new.md", After: cas.Sum([]byte("n"))},
			{Path: "del.md", Before: cas.Sum([]byte("d")), BaseBefore: cas.Sum([]byte("d"))},
		}}
	data := encodeRewrite(r)
	got, err := decodeRewrite(data)
	if err != nil || !reflect.DeepEqual(got, r) {
		t.Fatalf("round trip: %v\n%+v\n%+v", err, got, r)
	}
	for i := range data {
		bad := append([]byte{}, data...)
		bad[i] ^= 0x40
		if _, err := decodeRewrite(bad); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("flipped byte %d accepted", i)
		}
	}
	d := Dir{Path: t.TempDir()}
	sum, err := d.SaveRewrite(r)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := d.LoadRewrite(sum); err != nil || !reflect.DeepEqual(got, r) {
		t.Fatalf("load: %v %+v", err, got)
	}
	// A newer record does not replace the one an older flag names.
	r2 := *r
	r2.NextSum = cas.Sum([]byte("next2"))
	if _, err := d.SaveRewrite(&r2); err != nil {
		t.Fatal(err)
	}
	if got, err := d.LoadRewrite(sum); err != nil || !reflect.DeepEqual(got, r) {
		t.Fatalf("the older record is gone: %v %+v", err, got)
	}
	d.RemoveRewrite()
	if got, _ := d.LoadRewrite(sum); got != nil {
		t.Fatal("removeRewrite left a record")
	}
	if got, err := d.LoadRewrite("00"); err != nil || got != nil {
		t.Fatalf("a record the flag does not name was used: %v %+v", err, got)
	}
}

// The oldest baseline under a private root is the lowest generation any
// directory's baseline records, held paths or not; one whose header cannot be read pins
// everything (generation 0); no baseline at all is none.
func TestOldestBaseline(t *testing.T) {
	priv := t.TempDir()
	if _, ok := OldestBaseline(priv); ok {
		t.Fatal("an empty private root has a baseline")
	}
	for i, gen := range []uint64{5, 3, 9} {
		d := Dir{Path: DirPath(priv, "file:///s", "/w/"+string(rune('a'+i)), "/w/"+string(rune('a'+i)))}
		if _, err := d.WriteBaseline(&Baseline{Generation: gen, Files: map[string]cas.ID{"a.md": cas.Sum([]byte("a"))}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if g, ok := OldestBaseline(priv); !ok || g != 3 {
		t.Fatalf("oldest %d %v, want 3", g, ok)
	}
	// A baseline holding a conflicted path (SLDBASE2) has a generation too:
	// it must not pin everything.
	held := Dir{Path: DirPath(priv, "file:///s", "/w/held", "/w/held")}
	hb := &Baseline{Generation: 7, Files: map[string]cas.ID{"a.md": cas.Sum([]byte("a"))},
		Held: map[string]cas.ID{"a.md": cas.Sum([]byte("theirs"))}}
	if _, err := held.WriteBaseline(hb, nil); err != nil {
		t.Fatal(err)
	}
	if g, ok := OldestBaseline(priv); !ok || g != 3 {
		t.Fatalf("with a baseline holding a path: oldest %d %v, want 3", g, ok)
	}
	torn := Dir{Path: DirPath(priv, "file:///s", "/w/torn", "/w/torn")}
	if err := WriteAtomic(torn.File("baseline"), []byte("SLDB")); err != nil {
		t.Fatal(err)
	}
	if g, ok := OldestBaseline(priv); !ok || g != 0 {
		t.Fatalf("with a torn baseline: oldest %d %v, want 0", g, ok)
	}
}
