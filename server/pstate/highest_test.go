package pstate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/slivingdoc/slivingdoc/remote"
)

// The highest generation seen is kept in one file rewritten in place, and a
// torn record never makes a store look regressed: it reads as no memory.
func TestHighestGenerationRecord(t *testing.T) {
	dir := t.TempDir()
	g := NewHighest(dir, nil)
	for _, v := range []uint64{9, 10, 1300} {
		g.highest = v
		g.record()
		if got := g.readFile(); got != v {
			t.Fatalf("recorded %d, read %d", v, got)
		}
	}
	path := filepath.Join(dir, "highest")
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	g.highest = 1301
	g.record()
	if after, err := os.Stat(path); err != nil || !os.SameFile(before, after) {
		t.Fatalf("the record was replaced, not rewritten in place (%v)", err)
	}
	// Half of 1399 written over 1301: the digits alone would say 1391.
	data, _ := os.ReadFile(path)
	torn := append([]byte(nil), data...)
	copy(torn[:19], Seal("00000000000000001399")[:19])
	if err := os.WriteFile(path, torn, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := g.readFile(); got != 0 {
		t.Fatalf("torn record %q read as %d, want none", torn, got)
	}
	// A record an older binary wrote (by replacement) is read.
	if err := os.WriteFile(path, []byte("77\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := g.readFile(); got != 77 {
		t.Fatalf("older record read as %d, want 77", got)
	}
}

// Two processes of one P: a state one of them read before the other saw
// a later generation is learned without a false alarm and never lowers
// the record, while a fresh read below the record is still refused.
func TestHighestLearnsAnEarlierReadWithoutTheCheck(t *testing.T) {
	dir := t.TempDir()
	at := func(g uint64) remote.State {
		return remote.State{Manifest: &remote.Manifest{Version: 2, Generation: g}, ETag: "e"}
	}
	a, b := NewHighest(dir, nil), NewHighest(dir, nil)
	ctx := context.Background()
	if err := b.Observe(ctx, at(15)); err != nil {
		t.Fatal(err)
	}
	if err := a.Observe(ctx, at(17)); err != nil { // the other process, since b's read of 16
		t.Fatal(err)
	}
	b.Learn(at(16))
	if got := b.readFile(); got != 17 {
		t.Fatalf("after learning 16 beside a recorded 17: the record says %d", got)
	}
	b.Learn(at(18))
	if got := a.readFile(); got != 18 {
		t.Fatalf("after learning 18: the record says %d", got)
	}
	if err := a.Observe(ctx, at(16)); !errors.Is(err, remote.ErrGenerationRegressed) {
		t.Fatalf("a fresh read of 16 after 18 was seen: %v, want %v", err, remote.ErrGenerationRegressed)
	}
}
