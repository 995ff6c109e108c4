package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/slivingdoc/slivingdoc/remote"
)

// copyStoreFixture copies the write-once store fixture remote/testdata/name
// into a fresh file store.
func copyStoreFixture(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join("..", "..", "remote", "testdata", name)
	dst := filepath.Join(t.TempDir(), "store")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() == "README.md" {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// v2Notebook is the notebook the v2 fixture holds at generation 82.
func v2Notebook() map[string]string {
	var notes strings.Builder
	for i := 1; i <= 80; i++ {
		fmt.Fprintf(&notes, "line %d\n", i)
	}
	return map[string]string{"notes.md": notes.String(), "d/f0.md": "f80\n", "d/f1.md": "f77\n", "d/f2.md": "f78\n", "d/f3.md": "f79\n"}
}

// This build reads a store written by the version-2 binary (segments of
// their own under index/, rollups, two checkpoints) end to end — pull,
// verify, the whole history — and continues it with three writers
// committing at once: the first publication upgrades it to version 4,
// every line lands once, the version-2 history stays listed (also past a
// fold of the tail), verify is clean and a cold pull reads it all.
func TestCLIReadsAndContinuesV2Store(t *testing.T) {
	dir := copyStoreFixture(t, "v2-store")
	nb := &notebook{t: t, bin: cliBinary(t), env: []string{"SLIVINGDOC_STORE=file://" + filepath.ToSlash(dir)}, backend: "file"}
	st, err := remote.DecodeManifest(mustRead(t, filepath.Join(dir, "current")))
	if err != nil || st.Version != 2 || st.Generation != 82 || len(st.Segments) != 2 || st.Segments[0].Level != 2 {
		t.Fatalf("the fixture is not the v2 store it was: %v", err)
	}
	reader := nb.agent("reader")
	if o := reader.run("verify"); o.code != 0 {
		t.Fatalf("verify of the v2 store: %s", o)
	}
	reader.pull()
	equalFiles(t, "pull of the v2 store", reader.files(), v2Notebook())
	if o := reader.run("log", "--json", "-n", "100"); o.code != 0 || !strings.Contains(o.stdout, `"message": "c1"`) {
		t.Fatalf("log of the v2 store lacks the first commit: %s", o)
	}

	const writers, commits = 3, 8
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
	// The first commit upgraded the store to format 4 (generation 83),
	// keeping the version-2 segments below it.
	up, err := remote.DecodeManifestV4(mustRead(t, filepath.Join(dir, "current")))
	if err != nil || up.Upgraded != 83 || up.Generation != 82+writers*commits {
		t.Fatalf("after the writers: %v, %+v", err, up)
	}
	if !strings.HasPrefix(up.Segments[0].Key(), remote.SegmentsPrefix) {
		t.Fatalf("segments after the writers: %+v (want the v2 ones kept)", up.Segments)
	}
	// One writer alone then commits past the next fold of the tail.
	solo := nb.agent("solo")
	solo.pull()
	var soloContent strings.Builder
	for j := range 16 {
		fmt.Fprintf(&soloContent, "solo line %d\n", j)
		solo.write("solo.md", soloContent.String())
		if o := solo.run("commit", solo.dir, "-m", fmt.Sprintf("solo c%d", j)); o.code != 0 {
			t.Fatal(o)
		}
	}
	want := v2Notebook()
	for i := range writers {
		var content strings.Builder
		for j := range commits {
			fmt.Fprintf(&content, "writer %d line %d\n", i, j)
		}
		want[fmt.Sprintf("w%d.md", i)] = content.String()
	}
	want["solo.md"] = soloContent.String()
	reader.pull()
	equalFiles(t, "pull after the writers", reader.files(), want)
	nbk := remote.Open(openTestStore(t, nb.env), remote.Options{})
	cur, err := nbk.ReadCurrent(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	all, err := nbk.Publications(context.Background(), cur, 1, cur.Generation())
	if err != nil || len(all) < 80+writers*commits || all[0].Generation != 1 {
		t.Fatalf("history after the writers: %d entries, %v", len(all), err)
	}
	if o := reader.run("verify"); o.code != 0 {
		t.Fatalf("verify after the writers: %s", o)
	}
	fresh := nb.agent("fresh")
	fresh.pull()
	equalFiles(t, "cold pull of the continued store", fresh.files(), want)
}
