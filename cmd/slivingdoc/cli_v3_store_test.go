package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/remote"
)

// v3Apply applies to tree what the v3 fixture's commit with the given
// message wrote (remote/testdata/v3-store/README.md).
func v3Apply(t *testing.T, tree map[string]string, message string) {
	t.Helper()
	var i, w, j int
	switch {
	case strings.HasPrefix(message, "c"):
		if _, err := fmt.Sscanf(message, "c%d", &i); err != nil {
			t.Fatalf("unexpected message %q", message)
		}
		tree["notes.md"] += fmt.Sprintf("line %d\n", i)
		tree[fmt.Sprintf("d/f%d.md", i%4)] = fmt.Sprintf("f%d\n", i)
	default:
		if _, err := fmt.Sscanf(message, "w%d c%d", &w, &j); err != nil {
			t.Fatalf("unexpected message %q", message)
		}
		tree[fmt.Sprintf("w%d.md", w)] += fmt.Sprintf("writer %d line %d\n", w, j)
	}
}

// This build reads every generation of a store written by the version-3
// binary (carried segments and segments of their own, group-commit writes
// naming several generations, two checkpoints, rollups, the store ID and
// the packs of lost races): verify is clean, log lists each of the 64
// publications once with its message, and the whole tree of every
// generation, restored into a directory, is exactly what the commits up to
// it wrote, in the order log gives.
func TestCLIReadsEveryGenerationOfV3Store(t *testing.T) {
	dir := copyStoreFixture(t, "v3-store")
	nb := &notebook{t: t, bin: cliBinary(t), env: []string{"SLIVINGDOC_STORE=file://" + filepath.ToSlash(dir)}, backend: "file"}
	st, err := remote.DecodeManifest(mustRead(t, filepath.Join(dir, "current")))
	if err != nil || st.Version != 3 || st.Generation != 66 || len(st.Segments) != 7 || len(st.Checkpoints) != 1 {
		t.Fatalf("the fixture is not the v3 store it was: %v", err)
	}
	carried := 0
	for _, s := range st.Segments {
		if s.Carried() {
			carried++
		}
	}
	if carried != 5 {
		t.Fatalf("the fixture lists %d carried segments, want 5 of 7", carried)
	}

	// The group-commit writes: one time for every generation one write
	// names (the leader's first, its members after).
	nbk := remote.Open(openTestStore(t, nb.env), remote.Options{})
	cur, err := nbk.ReadCurrent(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	pubs, err := nbk.Publications(context.Background(), cur, 1, cur.Generation())
	if err != nil || len(pubs) != 64 {
		t.Fatalf("publications: %d, %v", len(pubs), err)
	}
	byTime := map[uint64][]uint64{}
	var groupTime uint64
	for _, p := range pubs {
		byTime[p.Time] = append(byTime[p.Time], p.Generation)
		if p.Generation == 37 {
			groupTime = p.Time
		}
	}
	if g := byTime[groupTime]; fmt.Sprint(g) != "[37 38 39]" {
		t.Fatalf("generation 37's write names %v, want [37 38 39]", g)
	}

	reader := nb.agent("reader")
	o := reader.run("verify", "--json")
	var v verifyJSON
	if err := json.Unmarshal([]byte(o.stdout), &v); err != nil || o.code != 0 || !v.OK || v.Generation != 66 || len(v.Findings) != 0 || len(v.Orphans) != 11 || v.OldestPublication != 1 {
		t.Fatalf("verify of the v3 store: %v\n%s", err, o)
	}

	o = reader.run("log", "--json", "-n", "100")
	var entries []struct {
		Generation uint64 `json:"generation"`
		Message    string `json:"message"`
	}
	if err := json.Unmarshal([]byte(o.stdout), &entries); err != nil || o.code != 0 || len(entries) != 64 {
		t.Fatalf("log of the v3 store: %d entries, %v\n%s", len(entries), err, o)
	}
	seen := map[string]bool{}
	for k, e := range entries {
		want := uint64(66 - k)
		if want <= 62 {
			want-- // the swap at 62 published nothing
		}
		if want <= 32 {
			want-- // nor did the one at 32
		}
		if e.Generation != want || seen[e.Message] {
			t.Fatalf("log entry %d: generation %d %q, want generation %d and each message once", k, e.Generation, e.Message, want)
		}
		seen[e.Message] = true
	}

	reader.pull()
	tree := map[string]string{"notes.md": ""}
	for k := len(entries) - 1; k >= 0; k-- {
		e := entries[k]
		v3Apply(t, tree, e.Message)
		g := fmt.Sprint(e.Generation)
		if o := reader.run("restore", "--force", reader.dir, "--generation", g); o.code != 0 {
			t.Fatalf("restore of generation %s: %s", g, o)
		}
		equalFiles(t, "generation "+g, reader.files(), tree)
	}
	if len(seen) != 64 || tree["notes.md"] != v3Notes(48) || tree["w3.md"] != "writer 3 line 0\nwriter 3 line 1\nwriter 3 line 2\nwriter 3 line 3\n" {
		t.Fatalf("the last generation's tree: %q", tree)
	}
	fresh := nb.agent("fresh")
	fresh.pull()
	equalFiles(t, "cold pull of the v3 store", fresh.files(), tree)
}

func v3Notes(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}
