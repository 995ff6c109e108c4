package pstate

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
)

// rewriteCycle makes P's side of one rewrite of L towards a baseline of
// generation gen, as the engine does (server/rewrite): the next baseline,
// the record, the flag; then the install, the flag cleared, the record
// removed.
func rewriteCycle(t *testing.T, d Dir, gen uint64) {
	t.Helper()
	next := &Baseline{Generation: gen, Head: cas.Sum([]byte{byte(gen)}), Files: map[string]cas.ID{
		"a.md": cas.Sum([]byte{byte(gen), 'a'}), "b.md": cas.Sum([]byte("b")),
	}}
	n, err := d.SaveNextBaseline(next, nil)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := d.SaveRewrite(&RewriteRecord{NextSum: n.Sum, Entries: []RewriteEntry{{Path: "a.md", After: next.Files["a.md"]}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.SetRecovery(RecoveryFlag{Op: "pull", Stage: "rewrite", RemoteAccepted: "no", Generation: gen, Rewrite: sum}); err != nil {
		t.Fatal(err)
	}
	if err := d.InstallNextBaseline(n.File); err != nil {
		t.Fatal(err)
	}
	if err := d.ClearRecovery(); err != nil {
		t.Fatal(err)
	}
	d.RemoveRewrite()
	f, err := d.OpenBaseline()
	if err != nil || f == nil {
		t.Fatalf("baseline: %v", err)
	}
	defer f.Close()
	if b, _, err := ReadBaseline(f); err != nil || b.Generation != gen {
		t.Fatalf("baseline after the rewrite: %+v, %v", b, err)
	}
}

// A spare is never read as a record, and a record met half written reads
// as none: the flag names a record by its checksum, which only a whole
// record under its own name matches; the next baseline is taken from its
// spare only when the spare holds exactly the bytes the record names.
func TestSparesAreNeverRecords(t *testing.T) {
	d := Dir{Path: t.TempDir()}
	r := &RewriteRecord{NextSum: cas.Sum([]byte("next")), Entries: []RewriteEntry{{Path: "a.md", After: cas.Sum([]byte("2"))}}}
	sum, err := d.SaveRewrite(r)
	if err != nil {
		t.Fatal(err)
	}
	name := d.File(rewritePrefix + sum)
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}

	// The record given back to its spare: the flag's checksum finds none.
	d.RemoveRewrite()
	if spare, err := os.ReadFile(d.File(rewriteSpare)); err != nil || !reflect.DeepEqual(spare, data) {
		t.Fatalf("the removed record is not in the spare: %v", err)
	}
	if got, err := d.LoadRewrite(sum); got != nil || err != nil {
		t.Fatalf("the spare was read as the record: %+v, %v", got, err)
	}

	// Half written under its name (a crash of a power cut, or an older
	// version's file): its checksum fails, it reads as none.
	for _, cut := range []int{0, 8, len(data) / 2, len(data) - 1} {
		if err := os.WriteFile(name, data[:cut], 0o600); err != nil {
			t.Fatal(err)
		}
		if got, err := d.LoadRewrite(sum); got != nil || err != nil {
			t.Fatalf("a record cut at %d bytes was read: %+v, %v", cut, got, err)
		}
	}

	// The next baseline: found in its spare by checksum; not when the
	// spare was torn while written, nor when it holds another baseline.
	next := &Baseline{Generation: 9, Head: cas.Sum([]byte("h")), Files: map[string]cas.ID{"a.md": cas.Sum([]byte("2"))}}
	n, err := d.SaveNextBaseline(next, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, got, installed := d.LoadNextBaseline(n.Sum); b == nil || installed || got.File != NextBaselineSpare || b.Generation != 9 {
		t.Fatalf("next baseline not found in its spare: %+v %+v %v", b, got, installed)
	}
	torn := append([]byte{}, n.Data...)
	torn[len(torn)/2] ^= 0xff
	if err := os.WriteFile(d.File(NextBaselineSpare), torn, 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _, _ := d.LoadNextBaseline(n.Sum); b != nil {
		t.Fatal("a torn next baseline was read")
	}
	other := encodeBaseline(&Baseline{Generation: 8, Files: map[string]cas.ID{}})
	if err := os.WriteFile(d.File(NextBaselineSpare), other, 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _, _ := d.LoadNextBaseline(n.Sum); b != nil {
		t.Fatal("another baseline in the spare was taken for the next one")
	}

	// The recovery flag given back to its spare is no flag.
	if err := d.SetRecovery(RecoveryFlag{Op: "pull", Stage: "rewrite", Rewrite: sum}); err != nil {
		t.Fatal(err)
	}
	if err := d.ClearRecovery(); err != nil {
		t.Fatal(err)
	}
	if f, err := d.LoadRecovery(); f != nil || err != nil {
		t.Fatalf("a cleared flag is read: %+v, %v", f, err)
	}
	if _, err := os.Lstat(d.File(recoverySpare)); err != nil {
		t.Fatalf("the flag was not given back to its spare: %v", err)
	}
}

// What an earlier version left mid-rewrite (baseline.next beside the
// record and the flag) is found, installed by rename, and removed.
func TestEarlierVersionsNextBaseline(t *testing.T) {
	d := Dir{Path: t.TempDir()}
	if err := WriteAtomic(d.File(baselineFile), encodeBaseline(&Baseline{Generation: 1, Files: map[string]cas.ID{}})); err != nil {
		t.Fatal(err)
	}
	next := encodeBaseline(&Baseline{Generation: 2, Files: map[string]cas.ID{"a.md": cas.Sum([]byte("a"))}})
	if err := WriteAtomic(d.File(oldNextBaselineFile), next); err != nil {
		t.Fatal(err)
	}
	var sum [32]byte
	copy(sum[:], next[len(next)-32:])
	b, n, installed := d.LoadNextBaseline(sum)
	if b == nil || installed || n.File != oldNextBaselineFile {
		t.Fatalf("baseline.next not found: %+v %+v %v", b, n, installed)
	}
	if err := d.InstallNextBaseline(n.File); err != nil {
		t.Fatal(err)
	}
	if b, _, installed := d.LoadNextBaseline(sum); b == nil || !installed {
		t.Fatal("the installed next baseline is not the baseline")
	}
	if _, err := os.Lstat(d.File(oldNextBaselineFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("baseline.next still there after its install: %v", err)
	}
	// One left beside a settled record (a crash after the install of
	// another) is removed with the record.
	if err := WriteAtomic(d.File(oldNextBaselineFile), next); err != nil {
		t.Fatal(err)
	}
	d.RemoveRewrite()
	if _, err := os.Lstat(filepath.Join(d.Path, oldNextBaselineFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("baseline.next not removed with the records: %v", err)
	}
}
