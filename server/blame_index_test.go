package server

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/server/history"
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
	if res.IndexComputed != int(head) {
		t.Errorf("first blame computed %d publications' changes, want %d", res.IndexComputed, head)
	}
	if n := history.IndexLen(a.e.storeDir()); n != int(head) {
		t.Fatalf("index holds %d publications, want %d", n, head)
	}
	for _, p := range []string{"notes/b.md", "c.md"} {
		if res := checkBlameReplayOf(t, a, p, head, msgs); res.IndexComputed != 0 {
			t.Errorf("blame of %s computed %d publications' changes, want 0 (the index has them)", p, res.IndexComputed)
		}
	}
	// Three more publications: the next blame computes those three.
	for i := range 3 {
		a.write("c.md", fmt.Sprintf("more %d\n", i))
		g := a.commit(fmt.Sprintf("more %d", i)).Generation
		head, msgs[g] = g, fmt.Sprintf("more %d", i)
	}
	if res := checkBlameReplayOf(t, a, "notes/b.md", head, msgs); res.IndexComputed != 3 {
		t.Errorf("blame after 3 publications computed %d, want 3", res.IndexComputed)
	}
	if res := checkBlameReplayOf(t, a, "c.md", head, msgs); res.IndexComputed != 0 {
		t.Errorf("second blame after 3 publications computed %d, want 0", res.IndexComputed)
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
	name := history.IndexFile(a.e.storeDir())
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
	foreign, err := os.ReadFile(history.IndexFile(other.e.storeDir()))
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
		if err := os.Remove(history.BlameCacheFile(a.e.storeDir(), "notes/b.md")); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		res := checkBlameReplayOf(t, a, "notes/b.md", head, msgs)
		if res.IndexComputed != int(head) {
			t.Errorf("with the %s index: computed %d publications' changes, want %d", tc.name, res.IndexComputed, head)
		}
		if got, _ := os.ReadFile(name); string(got) != string(good) {
			t.Errorf("with the %s index: not rewritten as it was", tc.name)
		}
	}
}
