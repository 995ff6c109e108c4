package server

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/merge"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/history"
)

// TestBlameEqualsReplay checks every line Blame reports against a
// brute-force replay of the history: the file is read at every generation
// (FileAt), and walking forward, the lines each version's diff with the one
// before inserts take that generation while the others keep theirs. The
// history is random edits from a seed (lines from a small alphabet, so
// lines repeat and diffs have choices; the file is sometimes removed and
// added again; some publications change another file only). A failure
// names its seed and replays from it.
func TestBlameEqualsReplay(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 4343))
			a := newAgent(t, memstore.New())
			a.pull()
			msgs := map[uint64]string{}
			commit := func(msg string) uint64 {
				g := a.commit(msg).Generation
				if _, ok := msgs[g]; !ok { // an edit that changed nothing publishes nothing
					msgs[g] = msg
				}
				return g
			}
			lines := randomLines(r, 20)
			a.write("notes/a.md", strings.Join(lines, ""))
			head := commit("first")
			for i := range 40 {
				switch k := r.IntN(20); {
				case k == 0 && lines != nil:
					a.remove("notes/a.md")
					lines = nil
				case k < 4:
					a.write("other.md", fmt.Sprintf("other %d\n", i))
				default:
					lines = randomEdit(r, lines)
					a.write("notes/a.md", strings.Join(lines, ""))
				}
				head = commit(fmt.Sprintf("edit %d\nsecond line", i))
				if i%15 == 14 && lines != nil {
					// A blame now leaves the cache the final one starts from.
					if _, err := a.e.Blame(context.Background(), history.BlameQuery{Path: "notes/a.md"}); err != nil {
						t.Fatal(err)
					}
				}
			}
			if lines == nil {
				a.write("notes/a.md", strings.Join(randomLines(r, 5), ""))
				head = commit("added again")
			}
			checkBlameReplay(t, a, head, msgs)
		})
	}
}

// checkBlameReplay compares Blame of notes/a.md at the head (generation
// head) with the replay of every generation's version of it.
func checkBlameReplay(t *testing.T, a *agent, head uint64, msgs map[uint64]string) {
	t.Helper()
	checkBlameReplayOf(t, a, "notes/a.md", head, msgs)
}

// checkBlameReplayOf is checkBlameReplay for the file p; it returns the
// blame.
func checkBlameReplayOf(t *testing.T, a *agent, p string, head uint64, msgs map[uint64]string) *history.BlameResult {
	t.Helper()
	ctx := context.Background()
	var prev []byte
	var gens []uint64 // per line of prev
	for g := uint64(1); g <= head; g++ {
		cur, err := a.e.FileAt(ctx, g, p)
		if err != nil {
			domainErr(t, err, diag.CodeInvalidRequest, diag.ReasonInvalidArgument) // no file at g
			cur, gens = nil, nil
		}
		if prev == nil && cur != nil {
			gens = nil // added (again): every line is new
			for range merge.CountLines(cur) {
				gens = append(gens, g)
			}
		} else if cur != nil {
			var next []uint64
			o := 0
			for _, ed := range merge.LineDiff(prev, cur) {
				next = append(next, gens[o:ed.OldStart]...)
				for range ed.NewEnd - ed.NewStart {
					next = append(next, g)
				}
				o = ed.OldEnd
			}
			gens = append(next, gens[o:]...)
		}
		prev = cur
	}
	res, err := a.e.Blame(ctx, history.BlameQuery{Path: p})
	if err != nil {
		t.Fatal(err)
	}
	if res.Generation != head || len(res.Lines) != len(gens) {
		t.Fatalf("blame at %d with %d lines, want %d with %d", res.Generation, len(res.Lines), head, len(gens))
	}
	for i, l := range res.Lines {
		if l.Number != i+1 || l.Generation != gens[i] || l.Before || l.Author != "" || l.Message != msgs[gens[i]] {
			t.Fatalf("line %d (%q): %+v, want generation %d (%q)", i+1, l.Text, l, gens[i], msgs[gens[i]])
		}
	}
	if !slices.Equal(joinBlame(res.Lines), prev) {
		t.Fatalf("blame's lines are not the head's file")
	}
	return res
}

func joinBlame(lines []history.BlameLine) []byte {
	var b []byte
	for _, l := range lines {
		b = append(b, l.Text...)
	}
	return b
}

// randomLines returns up to n lines from an alphabet with repeats, blank
// lines and fences; the last one sometimes lacks its newline.
func randomLines(r *rand.Rand, n int) []string {
	out := make([]string, 1+r.IntN(n))
	for i := range out {
		out[i] = randomLine(r)
	}
	return out
}

func randomLine(r *rand.Rand) string {
	alphabet := []string{"\n", "---\n", "- item\n", "# heading\n", "a line\n"}
	if r.IntN(2) == 0 {
		return fmt.Sprintf("line %d\n", r.IntN(50))
	}
	return alphabet[r.IntN(len(alphabet))]
}

// randomEdit inserts, removes or replaces a run of lines (keeping one).
func randomEdit(r *rand.Rand, lines []string) []string {
	lines = slices.Clone(lines)
	at := r.IntN(len(lines) + 1)
	n := 1 + r.IntN(3)
	switch r.IntN(3) {
	case 0:
		for range n {
			lines = slices.Insert(lines, at, randomLine(r))
		}
	case 1:
		lines = slices.Delete(lines, at, min(at+n, len(lines)))
	default:
		for i := at; i < min(at+n, len(lines)); i++ {
			lines[i] = randomLine(r)
		}
	}
	if len(lines) == 0 {
		lines = []string{randomLine(r)}
	}
	return lines
}

// TestBlameMergedLinesKeepTheirWriter: a publication that merges another
// writer's lines into its own takes only the lines it changed; the others
// keep the publication that wrote them.
func TestBlameMergedLinesKeepTheirWriter(t *testing.T) {
	store := memstore.New()
	a, b := newAgent(t, store), newAgent(t, store)
	a.pull()
	a.write("plan.md", "# Plan\n\none\ntwo\nthree\n")
	base := a.commit("base").Generation
	b.pull()
	a.write("plan.md", "# Plan by a\n\none\ntwo\nthree\n")
	byA := a.commit("a: title").Generation
	b.write("plan.md", "# Plan\n\none\ntwo\nthree, by b\n")
	byB := b.commit("b: three").Generation // merges a's title
	if b.read("plan.md") != "# Plan by a\n\none\ntwo\nthree, by b\n" {
		t.Fatalf("merge: %q", b.read("plan.md"))
	}
	res, err := b.e.Blame(context.Background(), history.BlameQuery{Path: "plan.md"})
	if err != nil {
		t.Fatal(err)
	}
	want := []uint64{byA, base, base, base, byB}
	for i, l := range res.Lines {
		if l.Generation != want[i] {
			t.Errorf("line %d %q: generation %d, want %d", i+1, l.Text, l.Generation, want[i])
		}
	}
	if res.Lines[4].Message != "b: three" || res.Lines[0].Message != "a: title" || res.Lines[0].Time.IsZero() {
		t.Errorf("messages and times: %+v", res.Lines)
	}
}

// TestBlameRange: -L's range reports only those lines, with their numbers;
// ranges past the end are cut, ranges that are none are refused, as is a
// path that is no file.
func TestBlameRange(t *testing.T) {
	a := newAgent(t, memstore.New())
	a.pull()
	a.write("d/n.md", "1\n2\n3\n")
	a.commit("one")
	a.write("d/n.md", "1\n2\n3\n4\n5")
	gen := a.commit("two").Generation
	ctx := context.Background()
	res, err := a.e.Blame(ctx, history.BlameQuery{Path: "d/n.md", Start: 3, End: 9})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range res.Lines {
		got = append(got, fmt.Sprintf("%d:%s:%d", l.Number, l.Text, l.Generation))
	}
	if want := []string{"3:3\n:1", fmt.Sprintf("4:4\n:%d", gen), fmt.Sprintf("5:5:%d", gen)}; !slices.Equal(got, want) {
		t.Errorf("lines %q, want %q", got, want)
	}
	for _, q := range []history.BlameQuery{
		{Path: "d/n.md", Start: 6},
		{Path: "d/n.md", Start: 3, End: 2},
		{Path: "d/n.md", Start: -1},
		{Path: "d"},
		{Path: "d/missing.md"},
		{Path: ""},
		{Path: "../x"},
	} {
		_, err := a.e.Blame(ctx, q)
		domainErr(t, err, diag.CodeInvalidRequest, diag.ReasonInvalidArgument)
	}
}

// TestBlameBeforeRetainedHistory: lines older than the retained history
// say so, naming the oldest retained publication; lines changed inside it
// have their publication.
func TestBlameBeforeRetainedHistory(t *testing.T) {
	// A small window and a checkpoint every 8 generations: 40 commits
	// move the history floor past the first one (retention_v4_test.go).
	a := retainV4Agent(t, memstore.New(), func(c *Config) { c.Retain = NoRetainWindow })
	a.pull()
	a.write("a.md", "old\n")
	a.commit("first")
	var last uint64
	for i := range 40 {
		a.write("a.md", fmt.Sprintf("old\nnew %d\n", i))
		last = a.commit("edit").Generation
		a.e.publishing.Background.Wait() // the checkpoint that drops the oldest history
	}
	ctx := context.Background()
	h, err := a.e.openHistory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	oldest := h.Retention().Oldest
	if oldest <= 1 {
		t.Fatalf("the history was not cut (oldest retained publication %d)", oldest)
	}
	res, err := a.e.Blame(ctx, history.BlameQuery{Path: "a.md"})
	if err != nil {
		t.Fatal(err)
	}
	if l := res.Lines[0]; !l.Before || l.Generation != oldest || !l.Time.IsZero() {
		t.Errorf("the first line: %+v, want before generation %d", l, oldest)
	}
	if l := res.Lines[1]; l.Before || l.Generation != last {
		t.Errorf("the second line: %+v, want generation %d", l, last)
	}
	var de *diag.Error
	if _, err := a.e.Blame(ctx, history.BlameQuery{Path: "b.md"}); !errors.As(err, &de) {
		t.Errorf("a missing file: %v", err)
	}
}

// TestBlameCache: a blame of a whole file leaves its answer in the private
// cache; the next walks only the publications since and takes the rest from
// it; a cache that does not fit is ignored.
func TestBlameCache(t *testing.T) {
	a := newAgent(t, memstore.New())
	a.pull()
	a.write("a.md", "one\ntwo\n")
	first := a.commit("first").Generation
	ctx := context.Background()
	blame := func() *history.BlameResult {
		t.Helper()
		res, err := a.e.Blame(ctx, history.BlameQuery{Path: "a.md"})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	blame()
	// Mark the cached publication, so that a line taken from the cache
	// shows it.
	name := history.BlameCacheFile(a.e.storeDir(), "a.md")
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("no cache after a blame: %v", err)
	}
	marked := strings.Replace(string(data), `"m":"first"`, `"m":"from the cache"`, 1)
	if marked == string(data) {
		t.Fatalf("cache %s", data)
	}
	if err := os.WriteFile(name, []byte(marked), 0o600); err != nil {
		t.Fatal(err)
	}
	a.write("a.md", "one\ntwo\nthree\n")
	third := a.commit("third").Generation
	res := blame()
	if res.Lines[0].Message != "from the cache" || res.Lines[0].Generation != first || res.Lines[2].Generation != third || res.Lines[2].Message != "third" {
		t.Errorf("after one more publication: %+v", res.Lines)
	}
	// A cache of another file ID, or that does not decode, is ignored.
	for _, bad := range []string{strings.Replace(marked, `"file":"`, `"file":"0`, 1), "{"} {
		if err := os.WriteFile(name, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		a.write("a.md", "one\ntwo\nthree\n"+bad[:1]+"\n")
		a.commit("more")
		if res := blame(); res.Lines[0].Message != "first" {
			t.Errorf("with the cache %.20q: %+v", bad, res.Lines[0])
		}
	}
}
