package server

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/history"
)

// A commit folded into another writer's group keeps its own author: alice
// registers her proposal and her process dies before folding it; bob's
// commit folds it into his group. The store records each publication
// under its own author, and History, Log and Blame read them back; a
// publication made without one reads as unknown ("").
func TestV4FoldedCommitKeepsItsAuthor(t *testing.T) {
	ctx := context.Background()
	store := memstore.New()
	seed := newAgent(t, store)
	seed.pull()
	seed.write("x.md", "1\n2\n3\n4\n5\n")
	seed.commit("seed") // no author claimed

	alice, bob := newAgent(t, store), newAgent(t, store)
	alice.pull()
	bob.pull()
	alice.write("x.md", "1\n2 by alice\n3\n4\n5\n")
	store.Inject(memstore.Fault{Op: memstore.OpList, KeyPrefix: remote.ProposalsPrefix, Before: errors.New("the process died here")})
	if _, err := alice.e.Commit(WithAuthor(ctx, "alice"), "", "alice's"); err == nil {
		t.Fatal("alice's commit went through")
	}
	memstore.AssertFaultsFired(t, store)
	bob.write("x.md", "1\n2\n3\n4 by bob\n5\n")
	res, err := bob.e.Commit(WithAuthor(ctx, "bob (bob@host)"), "", "bob's")
	if err != nil {
		t.Fatal(err)
	}
	// Bob's fold took alice's proposal first (it was registered first):
	// both land in one group, alice's at generation 2, bob's at 3.
	m := currentV4(t, store)
	if res.Generation != 3 || m.Generation != 3 {
		t.Fatalf("bob accepted at %d, current at %d: alice's proposal was not folded", res.Generation, m.Generation)
	}
	got := map[uint64]string{}
	for _, inc := range m.Increments {
		got[inc.Generation] = inc.Author
	}
	want := map[uint64]string{1: "", 2: "alice", 3: "bob (bob@host)"}
	equalAuthors(t, "current's increments", got, want)

	hist, err := bob.e.History(ctx, history.Query{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	got = map[uint64]string{}
	for _, h := range hist {
		got[h.Generation] = h.Author
	}
	equalAuthors(t, "History", got, want)

	log, err := bob.e.Log(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	got = map[uint64]string{}
	for _, l := range log {
		got[l.Generation] = l.Author
	}
	equalAuthors(t, "Log", got, want)

	bl, err := bob.e.Blame(ctx, history.BlameQuery{Path: "x.md"})
	if err != nil {
		t.Fatal(err)
	}
	lineAuthors := []string{}
	for _, l := range bl.Lines {
		lineAuthors = append(lineAuthors, l.Author)
	}
	if !slices.Equal(lineAuthors, []string{"", "alice", "", "bob (bob@host)", ""}) {
		t.Fatalf("blame's authors: %q", lineAuthors)
	}

	// The author filter: a regular expression, never matching unknown.
	for pattern, gens := range map[string][]uint64{"^bob": {3}, "alice|bob": {3, 2}, ".*": {3, 2}, "carol": {}} {
		hist, err := bob.e.History(ctx, history.Query{Limit: 10, Author: regexp.MustCompile(pattern)})
		if err != nil {
			t.Fatal(err)
		}
		var listed []uint64
		for _, h := range hist {
			listed = append(listed, h.Generation)
		}
		if len(listed) != len(gens) || len(gens) > 0 && (listed[0] != gens[0] || listed[len(listed)-1] != gens[len(gens)-1]) {
			t.Errorf("--author %q: generations %v, want %v", pattern, listed, gens)
		}
	}
}

func equalAuthors(t *testing.T, what string, got, want map[uint64]string) {
	t.Helper()
	for g, a := range want {
		if b, ok := got[g]; !ok || a != b {
			t.Errorf("%s: generation %d's author %q (listed %v), want %q", what, g, b, ok, a)
		}
	}
}

// A watch with an author filter lists, among the recent publications and
// among those that land while it runs, only those whose author matches.
func TestWatchFiltersByAuthor(t *testing.T) {
	store := memstore.New()
	w := newAgent(t, store)
	w.pull()
	text := ""
	commit := func(author, msg string) uint64 {
		t.Helper()
		text += msg + "\n"
		w.write("log.md", text)
		res, err := w.e.Commit(WithAuthor(context.Background(), author), "", msg)
		if err != nil {
			t.Fatal(err)
		}
		w.e.publishing.Background.Wait()
		return res.Generation
	}
	commit("", "nobody's")
	first := commit("alice", "alice's")
	commit("bob", "bob's")
	r := newAgent(t, store)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var recent, got, want []uint64
	polls := 0
	err := r.e.Watch(ctx, WatchOptions{
		Query: history.Query{Limit: 10, Author: regexp.MustCompile("^alice$")},
		Recent: func(en []history.Entry) error {
			for _, e := range en {
				recent = append(recent, e.Generation)
			}
			return nil
		},
		New: func(en history.Entry) error {
			got = append(got, en.Generation)
			return nil
		},
		Sleep: func(ctx context.Context, _ time.Duration) error {
			polls++
			switch polls {
			case 1:
				commit("bob", "bob again")
				want = append(want, commit("alice", "alice again"))
				commit("", "nobody again")
			case 3:
				cancel()
				return ctx.Err()
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(recent, []uint64{first}) || !slices.Equal(got, want) {
		t.Errorf("recent %v, new %v; want [%d], %v", recent, got, first, want)
	}
}
