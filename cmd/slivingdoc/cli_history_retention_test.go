package main

// Retention edges through the binary: after checkpoints and a sweep past
// the window by time (--retain 0) or inside it (--retain 1m, before the
// minute is up: the history below the oldest checkpoint is still
// stored), every history command at, around and past the oldest retained
// generation answers, or says HISTORY_UNAVAILABLE naming the generation
// verify reports; never CACHE_CORRUPT. log and verify agree.
//
// A version-4 sweep cuts history only once `current` is a window (K + M,
// 256 by default) past the oldest listed checkpoint, so the sweep is run
// in this process with a window of 8, standing for the one a commit of a
// fleet with a small window would run; with the writers stopped, nothing
// can be in flight that a small window would endanger. A version-4
// `current` lists at most two checkpoints whatever
// --retained-checkpoints says, and its window by time holds back the
// whole floor (every generation up to it must have left the window), so
// the version-3 cases of one or no retained checkpoint and of a window
// passed for the oldest publications only have no version-4 counterpart.

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/filestore"
)

func TestCLIHistoryRetentionEdges(t *testing.T) {
	for _, w := range []struct {
		name   string
		retain time.Duration // the sweep's --retain
		whole  bool          // nothing has left the window yet
	}{
		{"past-window", 0, false},
		{"inside-window", time.Minute, true},
	} {
		t.Run(w.name, func(t *testing.T) { retentionEdges(t, w.retain, w.whole) })
	}
}

// sweepV4 runs a version-4 sweep of nb's file store with a window (K + M)
// of 8 and retain as --retain.
func sweepV4(t *testing.T, nb *notebook, retain time.Duration) {
	t.Helper()
	store, err := filestore.New(storeDir(nb))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := remote.Open(store, remote.Options{}).CleanupV4(context.Background(), remote.CleanupV4Options{Window: 8, RetainFor: retain}); err != nil {
		t.Fatal(err)
	}
}

func retentionEdges(t *testing.T, retain time.Duration, whole bool) {
	nb := newNotebook(t, backends[0])
	a := nb.agent("a")
	// A checkpoint every 8 generations: at 26 the oldest listed one is a
	// window of 8 behind `current`.
	a.env = append(a.env, "SLIVINGDOC_CHECKPOINT_PACKS=8")
	a.pull()
	// Every commit adds files only, so any revert merges cleanly.
	for i := 1; i <= 26; i++ {
		a.write(fmt.Sprintf("n%d.md", i), fmt.Sprintf("note %d\n", i))
		if i%2 == 0 {
			a.write(fmt.Sprintf("sub/s%d.md", i), fmt.Sprintf("sub %d\n", i))
		}
		a.commit(fmt.Sprint("c", i))
	}
	sweepV4(t, nb, retain)
	a.pull()

	o := a.run("verify", "--json")
	var v verifyJSON
	if err := json.Unmarshal([]byte(o.stdout), &v); err != nil || o.code != 0 || !v.OK {
		t.Fatalf("verify: %v\n%s", err, o)
	}
	floor, oldest, head := v.OldestGeneration, v.OldestPublication, v.Generation
	switch {
	case whole && (floor != 0 || oldest != 1):
		// Every increment from the first is still listed: the history
		// reads from the empty notebook on.
		t.Fatalf("verify: oldest generation %d, oldest publication %d, want 0 and 1", floor, oldest)
	case !whole && (floor == 0 || oldest != floor+1):
		t.Fatalf("verify: oldest generation %d, oldest publication %d: the checkpoints dropped nothing", floor, oldest)
	}

	// log lists exactly the publications verify says are retained, in
	// every form the issue saw fail.
	logGens := func(args ...string) []uint64 {
		t.Helper()
		o := a.run(append([]string{"log"}, args...)...)
		if o.code != 0 {
			t.Fatalf("%s", o)
		}
		var gens []uint64
		for _, l := range strings.Split(o.stdout, "\n") {
			if m := reEntryHead.FindStringSubmatch(l); m != nil {
				var g uint64
				fmt.Sscan(m[1], &g)
				gens = append(gens, g)
			}
		}
		return gens
	}
	all := logGens("-n", "1000")
	switch {
	case oldest == 0 && len(all) != 0:
		t.Fatalf("verify retains no publication, log lists %v", all)
	case oldest != 0 && (len(all) == 0 || all[len(all)-1] != oldest):
		t.Fatalf("verify's oldest retained publication is %d, log's oldest entry of %v", oldest, all)
	}
	if !sort.SliceIsSorted(all, func(i, j int) bool { return all[i] > all[j] }) {
		t.Fatalf("log not newest first: %v", all)
	}
	if d := logGens(); len(d) != min(len(all), 10) {
		t.Fatalf("log at its default -n: %v, want the first %d of %v", d, min(len(all), 10), all)
	}
	if s := logGens("--since", "2000-01-01", "-n", "1000"); fmt.Sprint(s) != fmt.Sprint(all) {
		t.Fatalf("log --since: %v, want %v", s, all)
	}
	logGens("--path", "sub")
	logGens("--path", "n1.md", "-p")

	treeFloor := fmt.Sprintf("the oldest retained generation is %d.", floor)
	pubFloor := fmt.Sprintf("the oldest retained generation is %d.", oldest)
	if oldest == 0 {
		pubFloor = fmt.Sprintf("the oldest retained generation is %d, whose files", floor)
	}
	unavailable := func(o outcome, floorText string) {
		t.Helper()
		rep := mustFail(t, o)
		if rep.code != "INVALID_REQUEST" || rep.reason != "HISTORY_UNAVAILABLE" || rep.action != "FIX_REQUEST" || rep.retryable {
			t.Fatalf("want HISTORY_UNAVAILABLE:\n%s", o)
		}
		if !strings.Contains(o.stdout, floorText) {
			t.Fatalf("the report does not say %q:\n%s", floorText, o)
		}
	}
	gens := map[uint64]bool{1: true, floor - 1: true, floor: true, floor + 1: true, head - 1: true, head: true}
	if oldest > 0 {
		gens[oldest-1], gens[oldest], gens[oldest+1] = true, true, true
	}
	for g := range gens {
		if g == 0 || g > head {
			continue
		}
		gs := fmt.Sprint(g)
		// Commands that read the tree at g.
		for _, args := range [][]string{
			{"show", gs + ":n1.md"},
			{"diff", gs},
			{"restore", "--force", a.dir, "--generation", gs, "n1.md"},
			{"restore", "--force", a.dir, "--generation", gs},
		} {
			o := a.run(args...)
			if g >= floor {
				if o.code != 0 {
					t.Fatalf("generation %d is at or above the oldest retained one (%d):\n%s", g, floor, o)
				}
				continue
			}
			unavailable(o, treeFloor)
		}
		// Commands that read publication g (and the tree it was made on).
		for _, args := range [][]string{{"show", gs}, {"revert", "--force", a.dir, gs}} {
			o := a.run(args...)
			switch {
			case g <= floor:
				unavailable(o, pubFloor)
			case args[0] == "show" && o.code != 0:
				t.Fatalf("generation %d is above the oldest retained one (%d):\n%s", g, floor, o)
			case args[0] == "revert" && o.code != 0:
				// A generation a checkpoint swap took publishes nothing.
				if rep := mustFail(t, o); rep.code != "INVALID_REQUEST" || rep.reason != "INVALID_ARGUMENT" || !strings.Contains(o.stdout, "published nothing") {
					t.Fatalf("revert %d:\n%s", g, o)
				}
			}
		}
	}
	if o := a.run("verify"); o.code != 0 || !strings.Contains(o.stdout, fmt.Sprintf("history: oldest retained generation %d", floor)) {
		t.Fatalf("verify's report does not name the oldest retained generation %d:\n%s", floor, o)
	}
}

// On the stores of format versions 1, 2 and 3 kept in testdata (checkpointed,
// with a retained chain), read as they are: log and verify agree, and
// every generation's show, show GEN:PATH and diff answer or say
// HISTORY_UNAVAILABLE naming verify's numbers.
func TestCLIHistoryRetentionStoreFixtures(t *testing.T) {
	for _, name := range []string{"v1-store", "v2-store", "v3-store"} {
		t.Run(name, func(t *testing.T) { retentionOfFixture(t, name) })
	}
}

func retentionOfFixture(t *testing.T, name string) {
	dir := copyStoreFixture(t, name)
	nb := &notebook{t: t, bin: cliBinary(t), env: []string{"SLIVINGDOC_STORE=file://" + filepath.ToSlash(dir)}, backend: "file"}
	a := nb.agent("reader")
	o := a.run("verify", "--json")
	var v verifyJSON
	if err := json.Unmarshal([]byte(o.stdout), &v); err != nil || o.code != 0 || v.OldestPublication == 0 {
		t.Fatalf("verify: %v\n%s", err, o)
	}
	o = a.run("log", "-n", "1000")
	if o.code != 0 || oldestRetained(t, a) != v.OldestPublication {
		t.Fatalf("log's oldest entry is not verify's oldest publication %d:\n%s", v.OldestPublication, o)
	}
	edges := map[uint64]bool{}
	for _, g := range []uint64{1, v.OldestGeneration - 1, v.OldestGeneration, v.OldestGeneration + 1, v.OldestPublication - 1, v.OldestPublication, v.OldestPublication + 1, v.Generation} {
		edges[g] = g >= 1 && g <= v.Generation
	}
	for g, ok := range edges {
		if !ok {
			continue
		}
		for _, args := range [][]string{{"show", fmt.Sprint(g)}, {"show", fmt.Sprint(g, ":notes.md")}, {"diff", fmt.Sprint(g)}} {
			o := a.run(args...)
			usable, floor := g >= v.OldestGeneration, v.OldestGeneration
			if len(args[1]) == len(fmt.Sprint(g)) && args[0] == "show" {
				usable, floor = g > v.OldestGeneration, v.OldestPublication
			}
			if usable {
				// notes.md exists from generation 1 on in the fixture.
				if o.code != 0 {
					t.Fatalf("generation %d is retained (verify: %d, %d):\n%s", g, v.OldestGeneration, v.OldestPublication, o)
				}
				continue
			}
			rep := mustFail(t, o)
			if rep.reason != "HISTORY_UNAVAILABLE" || !strings.Contains(o.stdout, fmt.Sprintf("the oldest retained generation is %d.", floor)) {
				t.Fatalf("generation %d:\n%s", g, o)
			}
		}
	}
}
