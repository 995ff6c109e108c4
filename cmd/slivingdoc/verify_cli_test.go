package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/remote"
)

// A store made by real commits (with a checkpoint) verifies whole: exit 0,
// the human report ends in OK, the JSON report counts what was checked.
func TestCLIVerifyHealthyStore(t *testing.T) {
	forEachBackend(t, func(t *testing.T, nb *notebook) {
		a := nb.agent("writer")
		a.pull()
		env := []string{"SLIVINGDOC_CHECKPOINT_PACKS=2"}
		for i, c := range []string{"one\n", "one\ntwo\n", "one\ntwo\nthree\n"} {
			a.write("a.md", c)
			if o := a.runEnv(env, "commit", a.dir, "-m", "c"); o.code != 0 {
				t.Fatalf("commit %d: %s", i, o)
			}
		}
		// The checkpoint the commit of generation 2 registered is made
		// active by the next fold that LISTs: another writer's first
		// commit's.
		b := nb.agent("other")
		b.pull()
		b.write("b.md", "b\n")
		if o := b.run("commit", b.dir, "-m", "b"); o.code != 0 {
			t.Fatalf("commit b: %s", o)
		}
		o := a.run("verify")
		if o.code != 0 || !strings.Contains(o.stdout, "OK: the store is whole") {
			t.Fatalf("verify of a healthy store: %s", o)
		}
		o = a.run("verify", "--json")
		var rep verifyJSON
		if err := json.Unmarshal([]byte(o.stdout), &rep); err != nil || o.code != 0 {
			t.Fatalf("verify --json: %v\n%s", err, o)
		}
		// Four proposals and the checkpoint; two chains (the checkpoint's and the one
		// it retains, from the empty notebook).
		if !rep.OK || rep.Generation != 4 || rep.Chains != 2 || rep.Packs != 5 || rep.Objects == 0 || len(rep.Findings) != 0 || len(rep.Orphans) != 0 {
			t.Fatalf("verify --json report %+v", rep)
		}
	})
}

// A missing pack makes verify exit 1 and name it, in both formats.
func TestCLIVerifyReportsDamage(t *testing.T) {
	nb := newNotebook(t, backend{"file", fileStoreEnv})
	a := nb.agent("writer")
	a.pull()
	a.write("a.md", "text\n")
	a.commit("c")
	store := openTestStore(t, nb.env)
	objs, err := store.List(context.Background(), remote.ProposalsPrefix)
	if err != nil || len(objs) != 1 {
		t.Fatalf("proposals %v, %v", objs, err)
	}
	if err := store.Delete(context.Background(), objs[0].Key); err != nil {
		t.Fatal(err)
	}

	o := a.run("verify", "--json")
	var rep verifyJSON
	if err := json.Unmarshal([]byte(o.stdout), &rep); err != nil || o.code != 1 || rep.OK {
		t.Fatalf("verify --json of a damaged store: %v\n%s", err, o)
	}
	if len(rep.Findings) != 1 || rep.Findings[0].Code != remote.FindingPackMissing || rep.Findings[0].Key != objs[0].Key || rep.Findings[0].Chain != "active" {
		t.Fatalf("findings %+v", rep.Findings)
	}
	o = a.run("verify")
	if o.code != 1 || !strings.Contains(o.stdout, remote.FindingPackMissing) || !strings.Contains(o.stdout, objs[0].Key) {
		t.Fatalf("verify of a damaged store: %s", o)
	}
}

// Orphans are listed but the store is whole.
func TestCLIVerifyOrphansAreNotAnError(t *testing.T) {
	nb := newNotebook(t, backend{"file", fileStoreEnv})
	a := nb.agent("writer")
	a.pull()
	a.write("a.md", "text\n")
	a.commit("c")
	orphan := remote.IncrementKey(2, remote.NewUUIDv7())
	if err := openTestStore(t, nb.env).Put(context.Background(), orphan, []byte("lost proposal")); err != nil {
		t.Fatal(err)
	}
	o := a.run("verify", "--json")
	var rep verifyJSON
	if err := json.Unmarshal([]byte(o.stdout), &rep); err != nil || o.code != 0 || !rep.OK {
		t.Fatalf("verify with an orphan: %v\n%s", err, o)
	}
	if len(rep.Orphans) != 1 || rep.Orphans[0].Key != orphan {
		t.Fatalf("orphans %+v", rep.Orphans)
	}
}

// -h prints the reference and touches no store.
func TestCLIVerifyHelpTouchesNothing(t *testing.T) {
	nb := newNotebook(t, backend{"file", fileStoreEnv})
	a := nb.agent("reader")
	o := a.run("verify", "-h")
	if o.code != 0 || !strings.Contains(o.stdout, "-json") || !strings.Contains(o.stdout, "--checkpoint-packs") {
		t.Fatalf("verify -h: %s", o)
	}
	dir, _ := strings.CutPrefix(nb.env[0], "SLIVINGDOC_STORE=file://")
	if _, err := os.Stat(filepath.FromSlash(dir)); !os.IsNotExist(err) {
		t.Fatalf("verify -h created the store: %v", err)
	}
	if o := a.run("verify", "extra"); o.code != 2 {
		t.Fatalf("verify with an argument: %s", o)
	}
}

// Progress lines go to stderr, and only for large stores.
func TestVerifyProgressOnlyForLargeStores(t *testing.T) {
	var small, large strings.Builder
	p := &verifyProgress{w: &small}
	for i := range 10 {
		p.tick(i+1, 10)
	}
	p.finish()
	q := &verifyProgress{w: &large}
	for i := range 200 {
		q.tick(i+1, 200)
	}
	q.finish()
	if small.Len() != 0 {
		t.Fatalf("progress for 10 packs: %q", small.String())
	}
	if !strings.HasSuffix(large.String(), "verify: 200/200 packs checked\n") {
		t.Fatalf("progress for 200 packs: %q", large.String())
	}
}
