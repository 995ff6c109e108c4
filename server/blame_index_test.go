package server

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/memstore"
)

// blameIndexHistory makes a history from seed that edits notes/a.md,
// notes/b.md and c.md at random (one or two of them per publication,
// and count.md each time); it
// returns the head's generation and the messages by generation.
func blameIndexHistory(t *testing.T, a *agent, seed uint64, n int) (uint64, map[uint64]string) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 43))
	files := map[string][]string{}
	names := []string{"notes/a.md", "notes/b.md", "c.md"}
	for _, p := range names {
		files[p] = randomLines(r, 10)
		a.write(p, strings.Join(files[p], ""))
	}
	msgs := map[uint64]string{}
	head := a.commit("first").Generation
	msgs[head] = "first"
	for i := range n {
		for range 1 + r.IntN(2) {
			p := names[r.IntN(len(names))]
			files[p] = randomEdit(r, files[p])
			a.write(p, strings.Join(files[p], ""))
		}
		// Every publication changes something: histories of one length
		// have the same generations.
		a.write("count.md", fmt.Sprintf("%d\n", i))
		msg := fmt.Sprintf("edit %d", i)
		if g := a.commit(msg).Generation; g != head {
			head, msgs[g] = g, msg
		}
	}
	return head, msgs
}

// TestBlameIndex: the first blame builds the changed-paths index for
// every retained publication; a blame of another file reuses it whole and
// a blame after new publications computes only those; every answer equals
// the replay of the history.
func TestBlameIndex(t *testing.T) {
	a := newAgent(t, memstore.New())
	a.pull()
	head, msgs := blameIndexHistory(t, a, 1, 30)
	res := checkBlameReplayOf(t, a, "notes/a.md", head, msgs)
	if res.indexComputed != int(head) {
		t.Errorf("first blame computed %d publications' changes, want %d", res.indexComputed, head)
	}
	index := loadPathsIndex(a.e.pathsIndexFile())
	if len(index) != int(head) {
		t.Fatalf("index holds %d publications, want %d", len(index), head)
	}
	for _, p := range []string{"notes/b.md", "c.md"} {
		if res := checkBlameReplayOf(t, a, p, head, msgs); res.indexComputed != 0 {
			t.Errorf("blame of %s computed %d publications' changes, want 0 (the index has them)", p, res.indexComputed)
		}
	}
	// Three more publications: the next blame computes those three.
	for i := range 3 {
		a.write("c.md", fmt.Sprintf("more %d\n", i))
		g := a.commit(fmt.Sprintf("more %d", i)).Generation
		head, msgs[g] = g, fmt.Sprintf("more %d", i)
	}
	if res := checkBlameReplayOf(t, a, "notes/b.md", head, msgs); res.indexComputed != 3 {
		t.Errorf("blame after 3 publications computed %d, want 3", res.indexComputed)
	}
	if res := checkBlameReplayOf(t, a, "c.md", head, msgs); res.indexComputed != 0 {
		t.Errorf("second blame after 3 publications computed %d, want 0", res.indexComputed)
	}
}

// TestBlameIndexIgnored: an index that is damaged, or that holds another
// store's publications under this store's key (a store replaced at the
// URL), is not believed: the blame computes the changes again, answers
// as the replay does, and rewrites the index.
func TestBlameIndexIgnored(t *testing.T) {
	a := newAgent(t, memstore.New())
	a.pull()
	head, msgs := blameIndexHistory(t, a, 2, 20)
	checkBlameReplayOf(t, a, "notes/a.md", head, msgs)
	name := a.e.pathsIndexFile()
	good, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	// Another store with a history of the same shape: same generations,
	// other heads.
	other := newAgent(t, memstore.New())
	other.pull()
	otherHead, otherMsgs := blameIndexHistory(t, other, 3, 20)
	checkBlameReplayOf(t, other, "notes/a.md", otherHead, otherMsgs)
	foreign, err := os.ReadFile(other.e.pathsIndexFile())
	if err != nil {
		t.Fatal(err)
	}
	if otherHead != head {
		t.Fatalf("histories of %d and %d generations", head, otherHead)
	}
	damaged := []byte(strings.Clone(string(good)))
	damaged[len(damaged)/2] ^= 1
	for _, tc := range []struct {
		name string
		data []byte
	}{{"damaged", damaged}, {"torn", good[:len(good)/2]}, {"another store's", foreign}, {"empty", nil}} {
		if err := os.WriteFile(name, tc.data, 0o600); err != nil {
			t.Fatal(err)
		}
		// The blame cache would answer without a walk.
		if err := os.Remove(a.e.blameCacheFile("notes/b.md")); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		res := checkBlameReplayOf(t, a, "notes/b.md", head, msgs)
		if res.indexComputed != int(head) {
			t.Errorf("with the %s index: computed %d publications' changes, want %d", tc.name, res.indexComputed, head)
		}
		if got, _ := os.ReadFile(name); string(got) != string(good) {
			t.Errorf("with the %s index: not rewritten as it was", tc.name)
		}
	}
}

// TestBlameIndexBound: past its bound, the index keeps the newest
// publications whole and leaves the oldest out.
func TestBlameIndexBound(t *testing.T) {
	var entries []pathsEntry
	for g := uint64(1); g <= 10; g++ {
		entries = append(entries, pathsEntry{gen: g, head: idFor(g), parent: idFor(g - 1), changes: []pathsChange{{path: "a.md", id: idFor(100 + g)}, {path: fmt.Sprint("f", g), id: idFor(200 + g)}}})
	}
	m, err := decodePathsIndex(encodePathsIndex(entries, 7))
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 3 {
		t.Fatalf("%d entries kept under a bound of 7 paths of 2 per entry, want 3", len(m))
	}
	for g := uint64(8); g <= 10; g++ {
		en, ok := m[g]
		if !ok || en.head != idFor(g) || en.parent != idFor(g-1) || len(en.changes) != 2 || en.changes[1].path != fmt.Sprint("f", g) || en.changes[0].id != idFor(100+g) {
			t.Errorf("entry %d: %+v", g, en)
		}
	}
}

func idFor(n uint64) (id [32]byte) {
	id[0], id[1] = byte(n), byte(n>>8)
	return id
}

// FuzzPathsIndex: the index decoder, fed any bytes (with a checksum that
// fits, so the parser itself is reached), neither panics nor allocates
// beyond what the bytes can hold, and what it accepts encodes again to the
// same entries.
func FuzzPathsIndex(f *testing.F) {
	var entries []pathsEntry
	for g := uint64(1); g <= 3; g++ {
		entries = append(entries, pathsEntry{gen: g, head: idFor(g), parent: idFor(g - 1), changes: []pathsChange{{path: "a.md", id: idFor(10 + g)}}})
	}
	good := encodePathsIndex(entries, maxIndexChanges)
	f.Add(good[len(pathsIndexMagic) : len(good)-32])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, body []byte) {
		data := append([]byte(pathsIndexMagic), body...)
		sum := cas.Sum(data)
		m, err := decodePathsIndex(append(data, sum[:]...))
		if err != nil {
			return
		}
		var again []pathsEntry
		for _, en := range m {
			again = append(again, en)
		}
		slices.SortFunc(again, func(a, b pathsEntry) int { return cmp.Compare(a.gen, b.gen) })
		m2, err := decodePathsIndex(encodePathsIndex(again, maxIndexChanges))
		if err != nil || len(m2) != len(m) {
			t.Fatalf("re-encoded: %v, %d entries, want %d", err, len(m2), len(m))
		}
		for g, en := range m {
			en2 := m2[g]
			if en2.head != en.head || en2.parent != en.parent || !slices.Equal(en2.changes, en.changes) {
				t.Fatalf("entry %d: %+v, then %+v", g, en, en2)
			}
		}
	})
}
