package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/slivingdoc/slivingdoc/remote"
)

// v1Notebook is the notebook the fixture holds at generation 17.
func v1Notebook() map[string]string {
	var notes strings.Builder
	for i := 1; i <= 15; i++ {
		fmt.Fprintf(&notes, "line %d\n", i)
	}
	return map[string]string{"notes.md": notes.String(), "d/f0.md": "f12\n", "d/f1.md": "f13\n", "d/f2.md": "f14\n", "d/f3.md": "f15\n"}
}

// The v2 binary reads a v1 store end to end (current + checkpoint +
// increments), verify checks it, and the first publication upgrades it to
// format 4 with three writers committing at once: every commit accepted, every
// line once, history listed, verify clean.
func TestCLIReadsAndUpgradesV1Store(t *testing.T) {
	dir := copyStoreFixture(t, "v1-store")
	nb := &notebook{t: t, bin: cliBinary(t), env: []string{"SLIVINGDOC_STORE=file://" + filepath.ToSlash(dir)}, backend: "file"}
	st, err := remote.DecodeManifest(mustRead(t, filepath.Join(dir, "current")))
	if err != nil || st.Version != 1 || st.Generation != 17 {
		t.Fatalf("the fixture is not the v1 store it was: %v", err)
	}
	reader := nb.agent("reader")
	if o := reader.run("verify"); o.code != 0 {
		t.Fatalf("verify of the v1 store: %s", o)
	}
	reader.pull()
	equalFiles(t, "pull of the v1 store", reader.files(), v1Notebook())

	const writers, commits = 3, 6
	var wg sync.WaitGroup
	errs := make(chan string, writers)
	for i := range writers {
		a := nb.agent(fmt.Sprint("w", i))
		a.pull()
		wg.Go(func() {
			var content strings.Builder
			for j := range commits {
				fmt.Fprintf(&content, "writer %d line %d\n", i, j)
				a.write(fmt.Sprintf("w%d.md", i), content.String())
				if o := a.run("commit", a.dir, "-m", fmt.Sprintf("w%d c%d", i, j)); o.code != 0 {
					errs <- o.String()
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	// The first commit upgraded the store to format 4 (generation 18).
	up, err := remote.DecodeManifestV4(mustRead(t, filepath.Join(dir, "current")))
	if err != nil || up.Upgraded != 18 || up.Generation != 17+writers*commits {
		t.Fatalf("after the writers: %v, %+v", err, up)
	}
	reader.pull()
	want := v1Notebook()
	for i := range writers {
		var content strings.Builder
		for j := range commits {
			fmt.Fprintf(&content, "writer %d line %d\n", i, j)
		}
		want[fmt.Sprintf("w%d.md", i)] = content.String()
	}
	equalFiles(t, "pull after the upgrade", reader.files(), want)
	// History from before the upgrade is still listed.
	nbk := remote.Open(openTestStore(t, nb.env), remote.Options{})
	cur, err := nbk.ReadCurrent(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	old, err := nbk.Publications(context.Background(), cur, 1, 17)
	if err != nil || len(old) == 0 || old[len(old)-1].Generation != 17 {
		t.Fatalf("v1 history after the upgrade: %d entries, %v", len(old), err)
	}
	if o := reader.run("verify"); o.code != 0 {
		t.Fatalf("verify after the upgrade: %s", o)
	}
	// A fresh reader of the upgraded store reads the same notebook.
	fresh := nb.agent("fresh")
	fresh.pull()
	equalFiles(t, "cold pull of the upgraded store", fresh.files(), want)
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func equalFiles(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d files %v, want %d", what, len(got), keysOf(got), len(want))
	}
	for p, c := range want {
		if got[p] != c {
			t.Fatalf("%s: %s = %q, want %q", what, p, got[p], c)
		}
	}
}

func keysOf(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
