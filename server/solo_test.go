package server

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
)

// A long-lived writer working alone commits without reading `current`
// (two requests); once another writer has published, its guess fails the
// replace's condition, and the commit goes on from a fresh read: both
// writers' lines are in the notebook exactly once.
func TestSoloWriterCommitsInTwoRequests(t *testing.T) {
	store := memstore.New()
	a := newAgent(t, store, func(c *Config) { c.LongLived = true })
	a.pull()
	a.write("a.md", "seed\n")
	a.commit("seed")
	gets := func() int { return store.Calls(memstore.OpGet) + store.Calls(memstore.OpHead) }
	for i := range 4 {
		before := gets()
		a.appendTo("a.md", fmt.Sprintf("a %d\n", i))
		a.commit("append")
		// The first commit after the seed cannot know it is alone yet.
		if got, want := gets()-before, map[bool]int{true: 1, false: 0}[i == 0]; got != want {
			t.Fatalf("commit %d read current %d times, want %d", i, got, want)
		}
	}

	b := newAgent(t, store)
	b.pull()
	b.write("b.md", "by b\n")
	b.commit("b")

	a.appendTo("a.md", "a after b\n")
	r := a.commit("after b")
	if r.Generation != 7 || len(r.Files) != 1 || r.Files[0].Path != "a.md" {
		t.Fatalf("commit after another writer's: %+v", r)
	}
	// The next one reads again: a is no longer known to be alone.
	before := gets()
	a.appendTo("a.md", "and again\n")
	a.commit("again")
	if got := gets() - before; got != 1 {
		t.Fatalf("after another writer, a commit read current %d times, want 1", got)
	}
	c := newAgent(t, store)
	c.pull()
	st, err := c.e.Status(context.Background(), "")
	if err != nil || st.Generation != 8 {
		t.Fatalf("status %+v %v", st, err)
	}
	for _, want := range []string{"a.md:seed\na 0\na 1\na 2\na 3\na after b\nand again\n", "b.md:by b\n"} {
		p, content, _ := strings.Cut(want, ":")
		if got := c.read(p); got != content {
			t.Fatalf("%s = %q, want %q", p, got, content)
		}
	}
}
