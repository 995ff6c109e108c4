package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// 20 processes x 10 commits, each appending to its own file of one
// notebook: every line arrives, the generation equals the number of
// publications, and the only error any process sees is REMOTE_BUSY,
// which it retries.
func TestCLIConcurrentWriters(t *testing.T) {
	const writers, commits = 20, 10
	forEachBackend(t, func(t *testing.T, nb *notebook) {
		agents := make([]*agent, writers)
		for i := range agents {
			agents[i] = nb.agent(fmt.Sprint("w", i))
		}
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			busy int
		)
		errs := make(chan string, writers)
		for i, a := range agents {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if o := a.run("pull", a.dir); o.code != 0 {
					errs <- o.String()
					return
				}
				name := fmt.Sprintf("w%02d.md", i)
				var content strings.Builder
				last := uint64(0)
				for j := range commits {
					fmt.Fprintf(&content, "writer %d line %d\n", i, j)
					a.write(name, content.String())
					for {
						o := a.run("commit", a.dir, "-m", fmt.Sprintf("w%d c%d", i, j))
						if o.code == 0 {
							r, ok := parseOK(o.stdout)
							if !ok || r.generation <= last || r.files[name] != [2]int{1, 0} {
								errs <- "bad result: " + o.String()
								return
							}
							last = r.generation
							break
						}
						if rep, ok := parseReport(o.stdout); o.code == 1 && ok && rep.code == "REMOTE_BUSY" && rep.retryable {
							mu.Lock()
							busy++
							mu.Unlock()
							continue
						}
						errs <- o.String()
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
		if t.Failed() {
			return
		}
		obs := nb.agent("observer")
		r := obs.pull()
		if r.generation != writers*commits {
			t.Errorf("generation %d, want %d publications", r.generation, writers*commits)
		}
		files := obs.files()
		for i := range writers {
			var want strings.Builder
			for j := range commits {
				fmt.Fprintf(&want, "writer %d line %d\n", i, j)
			}
			if got := files[fmt.Sprintf("w%02d.md", i)]; got != want.String() {
				t.Errorf("w%02d.md = %q, want %q", i, got, want.String())
			}
		}
		t.Logf("%s: %d commits, %d REMOTE_BUSY retries", nb.backend, writers*commits, busy)
	})
}
