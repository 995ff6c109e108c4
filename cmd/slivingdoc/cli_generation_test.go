package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/slivingdoc/slivingdoc/remote"
)

// Issue 14, item 3: a store whose generation goes backwards is refused.
// Restoring an older `current` (as a backup would) must not make the next
// pull delete newer files, deleting `current` must not make pull delete
// every file or commit restart at generation 1, and verify reports both.
func TestCLIGenerationGoingBackIsRefused(t *testing.T) {
	forEachBackend(t, func(t *testing.T, nb *notebook) {
		ctx := context.Background()
		store := openTestStore(t, nb.env)
		a := nb.agent("a")
		a.pull()
		a.write("one.md", "1\n")
		a.commit("one")
		backup, _, err := store.Get(ctx, remote.CurrentKey)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"two.md", "three.md", "four.md"} {
			a.write(f, f+"\n")
			a.commit(f)
		}
		// Restore the old `current` over the newer one.
		cur, etag, err := store.Get(ctx, remote.CurrentKey)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := store.ReplaceIfMatch(ctx, remote.CurrentKey, backup, etag); err != nil {
			t.Fatal(err)
		}
		for _, op := range [][]string{{"pull", a.dir}, {"status", a.dir}} {
			r := mustFail(t, a.run(op...))
			if r.code != "STORAGE_INTEGRITY" || r.reason != "GENERATION_REGRESSED" {
				t.Fatalf("%s on a restored current: %s · %s", op[0], r.code, r.reason)
			}
		}
		a.write("five.md", "5\n")
		if r := mustFail(t, a.run("commit", a.dir, "-m", "five")); r.reason != "GENERATION_REGRESSED" {
			t.Fatalf("commit on a restored current: %s", r.reason)
		}
		if got := a.read("four.md"); got != "four.md\n" {
			t.Fatalf("a newer file was touched: %q", got)
		}
		checkVerifyRegressed(t, a)

		// Deleting `current`: the same, and a host that never saw the
		// store finds the newer packs.
		if err := store.Delete(ctx, remote.CurrentKey); err != nil {
			t.Fatal(err)
		}
		if r := mustFail(t, a.run("pull", a.dir)); r.reason != "GENERATION_REGRESSED" {
			t.Fatalf("pull after current was deleted: %s", r.reason)
		}
		fresh := nb.agent("fresh")
		if r := mustFail(t, fresh.run("pull", fresh.dir)); r.reason != "GENERATION_REGRESSED" {
			t.Fatalf("a new host's pull of a store without current: %s", r.reason)
		}
		if got := a.read("two.md"); got != "two.md\n" {
			t.Fatalf("a file was deleted: %q", got)
		}
		checkVerifyRegressed(t, a)

		// Put back what was accepted: everything works again.
		if _, err := store.CreateIfAbsent(ctx, remote.CurrentKey, cur); err != nil {
			t.Fatal(err)
		}
		a.commit("five")
		fresh.pull()
		if fresh.read("five.md") != "5\n" || fresh.read("one.md") != "1\n" {
			t.Fatal("the notebook after current was put back")
		}
	})
}

func checkVerifyRegressed(t *testing.T, a *agent) {
	t.Helper()
	o := a.run("verify", "--json")
	var rep verifyJSON
	if err := json.Unmarshal([]byte(o.stdout), &rep); err != nil || o.code == 0 || rep.OK {
		t.Fatalf("verify of a store that went back in time: %v\n%s", err, o)
	}
	found := false
	for _, f := range rep.Findings {
		found = found || f.Code == remote.FindingGenerationRegress
	}
	if !found {
		t.Fatalf("verify findings %+v, want %s", rep.Findings, remote.FindingGenerationRegress)
	}
}
