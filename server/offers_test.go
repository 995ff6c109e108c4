package server

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

// Writers of one machine waiting for their turn offer their proposals to
// its holder (remote/offers.go): one conditional write accepts several
// commits, each at its own generation with its own message and its own
// diffstat, every line once, and each writer's directory holds the
// accepted tree. A member learns of its acceptance and reaches the
// group's last generation from what the holder kept nearby (the kept state
// and the group's packs in one file): the writers read next to nothing
// from the store. Without offers (the control) every commit is its own
// conditional write.
func TestOffersOneTurnAcceptsTheWritersWaiting(t *testing.T) {
	const writers, rounds = 6, 3
	run := func(t *testing.T, offers bool) (commits, writes, gets int, members int64) {
		m := memstore.New()
		turnsDir := t.TempDir()
		machine := func(c *Config) { c.TurnsDir, c.NoTurnOffers = turnsDir, !offers }
		agents := make([]*agent, writers)
		for i := range agents {
			agents[i] = newAgent(t, m, machine)
		}
		agents[0].pull()
		agents[0].write("log.md", "log\n")
		agents[0].commit("seed")
		for _, a := range agents {
			a.pull()
		}
		// A slow conditional write keeps each turn long enough for the
		// others to queue behind it.
		for range 4 * writers * rounds {
			m.Inject(memstore.Fault{Op: memstore.OpReplace, KeyPrefix: remote.CurrentKey, Delay: 15 * time.Millisecond})
		}
		replaces, gets := m.Calls(memstore.OpReplace), m.Calls(memstore.OpGet)
		var wg sync.WaitGroup
		results := make([][]*Result, writers)
		for i, a := range agents {
			wg.Go(func() {
				for r := range rounds {
					line := fmt.Sprintf("w%d r%d", i, r)
					a.appendTo("log.md", line+"\n")
					a.write(fmt.Sprintf("w%d.md", i), line+"\n")
					res, err := a.e.Commit(context.Background(), "", "commit "+line)
					if err != nil {
						t.Errorf("writer %d round %d: %v", i, r, err)
						return
					}
					results[i] = append(results[i], res)
				}
			})
		}
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
		gets = m.Calls(memstore.OpGet) - gets
		reader := newAgent(t, m)
		reader.pull()
		log := reader.read("log.md")
		for i := range writers {
			for r := range rounds {
				line := fmt.Sprintf("w%d r%d", i, r)
				if n := strings.Count(log, line+"\n"); n != 1 {
					t.Errorf("%q is %d times in log.md", line, n)
				}
			}
			if got, want := reader.read(fmt.Sprintf("w%d.md", i)), fmt.Sprintf("w%d r%d\n", i, rounds-1); got != want {
				t.Errorf("w%d.md = %q, want %q", i, got, want)
			}
			// Each commit's diffstat is its own change: its file and
			// one line of the log.
			for r, res := range results[i] {
				files := map[string]bool{}
				for _, f := range res.Files {
					files[f.Path] = true
				}
				if len(res.Files) != 2 || !files["log.md"] || !files[fmt.Sprintf("w%d.md", i)] {
					t.Errorf("writer %d round %d: diffstat %+v, want its two files", i, r, res.Files)
				}
			}
			// L is the accepted tree of the generation the commit
			// reported, apart from what others published since.
			if got := agents[i].read(fmt.Sprintf("w%d.md", i)); got != fmt.Sprintf("w%d r%d\n", i, rounds-1) {
				t.Errorf("writer %d's own file reads %q after its commits", i, got)
			}
		}
		nb := remote.Open(m, remote.Options{})
		state, err := nb.ReadCurrent(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		incs, err := nb.Publications(context.Background(), state, 2, state.Generation())
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, inc := range incs {
			if seen[inc.Publication] {
				t.Errorf("publication %s accepted twice", inc.Publication)
			}
			seen[inc.Publication] = true
		}
		if len(incs) != writers*rounds {
			t.Errorf("%d publications after the seed, want %d", len(incs), writers*rounds)
		}
		for _, a := range agents {
			_, n := a.e.notebook.GroupStats()
			members += n
		}
		return len(incs), m.Calls(memstore.OpReplace) - replaces, gets, members
	}
	t.Run("offers", func(t *testing.T) {
		commits, writes, gets, members := run(t, true)
		t.Logf("%d commits in %d conditional writes, %d as offers, %d GETs", commits, writes, members, gets)
		if members == 0 || writes >= commits {
			t.Fatalf("%d commits in %d conditional writes, %d accepted as offers: no turn accepted a waiting writer", commits, writes, members)
		}
		// One GET of `current` by the first holder; members that read
		// the increments of their groups from the store made some fifty.
		if gets > writers {
			t.Errorf("%d GETs while the writers committed: the members read from the store what the holders kept nearby", gets)
		}
	})
	t.Run("control", func(t *testing.T) {
		commits, writes, _, members := run(t, false)
		if members != 0 || writes < commits {
			t.Fatalf("without offers: %d commits in %d conditional writes, %d as offers", commits, writes, members)
		}
	})
}
