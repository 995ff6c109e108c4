package server

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/server/history/historytest"
)

// TestBlameEqualsReplayChunked is TestBlameEqualsReplay on a file of many
// chunks, edited as TestVersionDiffEqualsLineDiff edits: the walk's
// answers, line by line, are the replay's.
func TestBlameEqualsReplayChunked(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 43))
			a := newAgent(t, memstore.New())
			a.pull()
			msgs := map[uint64]string{}
			commit := func(msg string) uint64 {
				g := a.commit(msg).Generation
				if _, ok := msgs[g]; !ok {
					msgs[g] = msg
				}
				return g
			}
			lines := historytest.ChunkedLines(r, 300)
			a.write("notes/a.md", strings.Join(lines, ""))
			head := commit("first")
			for i := range 25 {
				if r.IntN(5) == 0 {
					a.write("other.md", fmt.Sprintf("other %d\n", i))
				} else {
					lines = historytest.ChunkedEdit(r, lines)
					a.write("notes/a.md", strings.Join(lines, ""))
				}
				head = commit(fmt.Sprintf("edit %d", i))
			}
			checkBlameReplay(t, a, head, msgs)
		})
	}
}
