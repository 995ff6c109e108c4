package main

// A store whose `current` is format version 4: the CLI reads it (pull,
// log, verify) and publishes to it by version 4, each commit reporting
// its own generation.

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/slivingdoc/slivingdoc/remote/filestore"
	"github.com/slivingdoc/slivingdoc/server"
)

// seedInProcess makes the notebook's first commit (generation 1, format
// version 4 like every commit) by an engine in this process that claims
// no author.
func seedInProcess(t *testing.T, nb *notebook) {
	t.Helper()
	if g := commitV4InProcess(t, nb, context.Background(), "seed\n", "seed"); g != 1 {
		t.Fatalf("seed: generation %d, want 1", g)
	}
}

// commitV4InProcess commits seed.md with content by an engine of this
// process, under ctx (which may carry an author), and returns the
// generation.
func commitV4InProcess(t *testing.T, nb *notebook, ctx context.Context, content, message string) uint64 {
	t.Helper()
	store, err := filestore.New(storeDir(nb))
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	e, err := server.New(server.Config{Store: store, PrivateRoot: t.TempDir(), WorkspaceRoot: ws, DefaultDir: filepath.Join(ws, "notes")})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.Pull(ctx, ""); err != nil {
		t.Fatal(err)
	}
	writeSeed(t, filepath.Join(ws, "notes", "seed.md"), content)
	res, err := e.Commit(ctx, "", message)
	if err != nil {
		t.Fatalf("commit %q: %v", message, err)
	}
	return res.Generation
}

// Six CLI writers x 8 commits at once on a version-4 store: 48 distinct
// generations 2..49 reported, each writer's directory holding the tree
// of its last one, and the log listing them all.
func TestCLIVersion4StoreSixWriters(t *testing.T) {
	const writers, commits = 6, 8
	nb := newNotebook(t, backends[0])
	seedInProcess(t, nb)
	agents := make([]*agent, writers)
	for i := range agents {
		agents[i] = nb.agent(fmt.Sprint("w", i))
		agents[i].pull()
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		gens  []uint64
		named = map[uint64]string{} // generation -> the file its commit added
		last  = make([]uint64, writers)
	)
	errs := make(chan string, writers)
	for i, a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range commits {
				name := fmt.Sprintf("w%d-%d.md", i, j)
				a.write(name, name+"\n")
				o := a.run("commit", a.dir, "-m", name)
				r, ok := parseOK(o.stdout)
				if o.code != 0 || !ok || r.files[name] != [2]int{1, 0} {
					errs <- o.String()
					return
				}
				mu.Lock()
				gens = append(gens, r.generation)
				named[r.generation] = name
				last[i] = r.generation
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	slices.Sort(gens)
	for i, g := range gens {
		if g != uint64(i+2) {
			t.Fatalf("reported generations are not 2..49: %v", gens)
		}
	}
	for i, a := range agents {
		want := map[string]string{"seed.md": "seed\n"}
		for g := uint64(2); g <= last[i]; g++ {
			want[named[g]] = named[g] + "\n"
		}
		if got := a.files(); !maps.Equal(got, want) {
			t.Fatalf("writer %d's directory is not the tree of generation %d:\n got %v\nwant %v", i, last[i], got, want)
		}
	}
	obs := nb.agent("observer")
	if r := obs.pull(); r.generation != 1+writers*commits || len(obs.files()) != 1+writers*commits {
		t.Fatalf("observer: generation %d, %d files", r.generation, len(obs.files()))
	}
	if o := obs.run("verify"); o.code != 0 {
		t.Fatalf("verify:\n%s", o)
	}
}

func writeSeed(t *testing.T, p, content string) {
	t.Helper()
	a := &agent{nb: &notebook{t: t}, dir: filepath.Dir(p)}
	a.write(filepath.Base(p), content)
}
