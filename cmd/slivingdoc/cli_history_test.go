package main

// History for people, through the binary on every backend: an agent's bad
// publication seen with show and log -p, a deleted file brought back with
// restore, the publication undone with revert while later work by others
// stays, and a revert that overlaps later edits leaving conflict blocks.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/diag"
)

// badPatch is exactly what the agent's publication changed.
const badPatch = `diff --git a/docs/gone.md b/docs/gone.md
deleted file mode 100644
--- a/docs/gone.md
+++ /dev/null
@@ -1,2 +0,0 @@
-a note the agent deleted
-second line
diff --git a/plan.md b/plan.md
--- a/plan.md
+++ b/plan.md
@@ -1,6 +1,6 @@
 # Plan
-one
-two
+rewritten by the agent
+badly
 three
 four
 five
`

var reEntryHead = regexp.MustCompile(`^generation (\d+)  \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ(  by .+)?$`) // every publication names its author

// wantEntry checks a show / log -p entry: header, message, diffstat, a
// blank line, then exactly patch.
func wantEntry(t *testing.T, out string, gen uint64, message string, stat []string, patch string) {
	t.Helper()
	head, rest, ok := strings.Cut(out, "\n")
	if m := reEntryHead.FindStringSubmatch(head); !ok || m == nil || m[1] != fmt.Sprint(gen) {
		t.Fatalf("entry header %q, want generation %d:\n%s", head, gen, out)
	}
	want := "    " + message + "\n"
	for _, s := range stat {
		want += "  " + s + "\n"
	}
	want += "\n" + patch
	if rest != want {
		t.Fatalf("entry of generation %d:\n--- got\n%s\n--- want\n%s", gen, rest, want)
	}
}

func TestCLIHistoryUndoAnAgentsWork(t *testing.T) {
	forEachBackend(t, func(t *testing.T, nb *notebook) {
		person, agentX, other1, other2 := nb.agent("person"), nb.agent("agent"), nb.agent("other1"), nb.agent("other2")
		person.pull()
		person.write("plan.md", "# Plan\none\ntwo\nthree\nfour\nfive\n")
		person.write("docs/gone.md", "a note the agent deleted\nsecond line\n")
		person.write("log.md", "day 1\n")
		person.commit("seed") // 1

		agentX.pull()
		agentX.remove("docs/gone.md")
		agentX.write("plan.md", "# Plan\nrewritten by the agent\nbadly\nthree\nfour\nfive\n")
		if d := agentX.run("diff", agentX.dir); d.code != 0 || d.stdout != badPatch {
			t.Fatalf("diff of the local edits before the commit:\n%s", d)
		}
		if r := agentX.commit("tidy up"); r.generation != 2 {
			t.Fatalf("bad publication at %d", r.generation)
		}
		stat := []string{"docs/gone.md  +0 -2", "plan.md  +2 -2", "2 files changed, 2 insertions(+), 4 deletions(-)"}

		o := person.run("show", "2")
		if o.code != 0 {
			t.Fatalf("%s", o)
		}
		wantEntry(t, o.stdout, 2, "tidy up", stat, badPatch)
		o = person.run("log", "-p", "-n", "1")
		if o.code != 0 {
			t.Fatalf("%s", o)
		}
		wantEntry(t, o.stdout, 2, "tidy up", stat, badPatch)
		if o := person.run("log", "--path", "docs/gone.md", "--stat"); o.code != 0 || strings.Count(o.stdout, "generation ") != 2 || !strings.HasPrefix(o.stdout, "generation 2") {
			t.Fatalf("log --path: the two publications that touched the file:\n%s", o)
		}
		if o := person.run("show", "1:docs/gone.md"); o.code != 0 || o.stdout != "a note the agent deleted\nsecond line\n" {
			t.Fatalf("show 1:docs/gone.md:\n%s", o)
		}

		// Restore the deleted file from generation 1, commit, and a second
		// client has it again.
		person.pull()
		r := mustOKPrefix(t, person.run("restore", person.dir, "--generation", "1", "docs/gone.md"), "OK  restored generation 1 ")
		if r != "docs/gone.md  +2 -0\n1 file changed, 2 insertions(+), 0 deletions(-)\n" {
			t.Fatalf("restore result %q", r)
		}
		if st := person.run("status", person.dir); !strings.Contains(st.stdout, "A  docs/gone.md") {
			t.Fatalf("the restore is a local addition:\n%s", st)
		}
		person.commit("bring back gone.md") // 3
		second := nb.agent("second")
		second.pull()
		if got := second.read("docs/gone.md"); got != "a note the agent deleted\nsecond line\n" {
			t.Fatalf("second client's docs/gone.md %q", got)
		}

		// Two further publications by others, then revert the bad one.
		other1.pull()
		other1.write("log.md", "day 1\nday 2\n")
		other1.commit("day 2") // 4
		other2.pull()
		other2.write("new.md", "new work\n")
		other2.write("plan.md", "# Plan\nrewritten by the agent\nbadly\nthree\nfour\nfive\nsix by other2\n")
		other2.commit("more") // 5
		person.pull()
		// --generation, restore's form, names GEN as the second argument does.
		mustOKPrefix(t, person.run("revert", person.dir, "--generation", "2"), "OK  reverted generation 2 ")
		if c := person.commit("revert generation 2"); c.generation != 6 {
			t.Fatalf("revert published at %d", c.generation)
		}
		second.pull()
		want := map[string]string{
			"plan.md":      "# Plan\none\ntwo\nthree\nfour\nfive\nsix by other2\n",
			"docs/gone.md": "a note the agent deleted\nsecond line\n",
			"log.md":       "day 1\nday 2\n",
			"new.md":       "new work\n",
		}
		if got := second.files(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("after the revert\n got  %q\n want %q", got, want)
		}

		// A revert overlapping a later edit leaves conflict blocks.
		agentX.pull()
		agentX.write("plan.md", "# Plan\nONE\ntwo\nthree\nfour\nfive\nsix by other2\n")
		agentX.commit("shout") // 7
		other1.pull()
		other1.write("plan.md", "# Plan\nONE, edited later\ntwo\nthree\nfour\nfive\nsix by other2\n")
		other1.commit("refine") // 8
		person.pull()
		rep := mustFail(t, person.run("revert", person.dir, "7"))
		if rep.code != "CONTENT_CONFLICT" || rep.reason != "MERGE_CONFLICT" || rep.action != "EDIT_FILES" {
			t.Fatalf("revert conflict report %+v", rep)
		}
		f, ok := rep.file("plan.md")
		if !ok || f.reason != "TEXT_CONFLICT" || f.ranges != "2-6" {
			t.Fatalf("conflict file %+v", rep.files)
		}
		wantText := "# Plan\n<<<<<<< local\nONE, edited later\n=======\none\n>>>>>>> remote\ntwo\nthree\nfour\nfive\nsix by other2\n"
		if got := person.read("plan.md"); got != wantText {
			t.Fatalf("conflict blocks:\n%s", got)
		}
		if c := mustFail(t, person.run("commit", person.dir, "-m", "x")); c.reason != "UNRESOLVED_MARKERS" {
			t.Fatalf("commit with the blocks: %+v", c)
		}
	})
}

// mustOKPrefix wants exit 0 and a first line starting with prefix; it
// returns the lines after it.
func mustOKPrefix(t *testing.T, o outcome, prefix string) string {
	t.Helper()
	first, rest, _ := strings.Cut(o.stdout, "\n")
	if o.code != 0 || !strings.HasPrefix(first, prefix) {
		t.Fatalf("want %q:\n%s", prefix, o)
	}
	return rest
}

// cutV2Fixture fills nb's file store with the version-2 fixture (82
// generations) and cuts its history as a writer before format 4 did: a
// version-3 checkpoint through 82 (swapped in at generation 83) keeping
// no older chain, and its cleanup. (Format 4's writers do not cut history
// yet.) Then a commits twice: generations 84 and 85, the first upgrading
// the store.
func cutV2Fixture(t *testing.T, nb *notebook, a *agent) {
	t.Helper()
	copyTree(t, filepath.Join("..", "..", "remote", "testdata", "v2-store"), storeDir(nb))
	if err := os.Remove(filepath.Join(storeDir(nb), "README.md")); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rn := remote.Open(openTestStore(t, nb.env), remote.Options{})
	res, err := rn.Checkpoint(ctx, remote.CheckpointOptions{MinIncrements: 1})
	if err != nil || res.Checkpoint.Through != 82 {
		t.Fatalf("checkpoint of the fixture: %+v, %v", res.Checkpoint, err)
	}
	if _, err := rn.Cleanup(ctx, res.Checkpoint.Through); err != nil {
		t.Fatal(err)
	}
	a.pull()
	for i := range 2 {
		a.write("n.md", fmt.Sprintf("%d\n", i))
		a.commit(fmt.Sprint("c", i))
	}
}

// A generation the store no longer retains is HISTORY_UNAVAILABLE, naming
// the oldest retained generation, for every history command (exit 1).
func TestCLIHistoryUnavailable(t *testing.T) {
	nb := newNotebook(t, backends[0])
	a := nb.agent("a")
	cutV2Fixture(t, nb, a)
	oldest := oldestRetained(t, a)
	if oldest != 84 {
		t.Fatalf("oldest retained generation %d, want 84: the checkpoint dropped nothing", oldest)
	}
	// The tree commands can go back to the oldest kept checkpoint, the
	// publication commands to the oldest publication above it, as verify
	// reports them.
	o := a.run("verify", "--json")
	var v verifyJSON
	if err := json.Unmarshal([]byte(o.stdout), &v); err != nil || v.OldestPublication != oldest || v.OldestGeneration >= oldest {
		t.Fatalf("verify disagrees with log's oldest entry %d: %v\n%s", oldest, err, o)
	}
	for _, c := range []struct {
		args  []string
		floor uint64
	}{
		{[]string{"show", "1"}, oldest},
		{[]string{"show", "1:n.md"}, v.OldestGeneration},
		{[]string{"diff", "1"}, v.OldestGeneration},
		{[]string{"restore", a.dir, "--generation", "1"}, v.OldestGeneration},
		{[]string{"revert", a.dir, "1"}, oldest},
	} {
		o := a.run(c.args...)
		rep := mustFail(t, o)
		if rep.code != "INVALID_REQUEST" || rep.reason != "HISTORY_UNAVAILABLE" || rep.action != "FIX_REQUEST" || rep.retryable {
			t.Fatalf("%v: %+v", c.args, rep)
		}
		if !strings.Contains(o.stdout, fmt.Sprintf("oldest retained generation is %d.", c.floor)) {
			t.Fatalf("%v does not name the oldest retained generation (%d):\n%s", c.args, c.floor, o)
		}
	}
	if o := a.run("show", fmt.Sprint(oldest)); o.code != 0 {
		t.Fatalf("the oldest retained publication shows:\n%s", o)
	}
}

// rowHistoryUnavailable is the docs/errors.md row's test: the row is
// CLI-only (agents have no history tool), so it goes through the CLI.
func rowHistoryUnavailable(t *testing.T, nb *notebook, row diag.CatalogRow) {
	a := nb.agent("a")
	cutV2Fixture(t, nb, a)
	rep := mustFail(t, a.run("show", "1"))
	if rep.code != string(row.Code) || rep.reason != row.Reason || rep.action != string(row.Action) || rep.retryable != row.Retryable || len(rep.files) != 0 {
		t.Fatalf("report %+v, want the row %+v", rep, row)
	}
}

// oldestRetained is the generation of the last entry of the full log.
func oldestRetained(t *testing.T, a *agent) uint64 {
	t.Helper()
	o := a.run("log", "-n", "1000")
	var last uint64
	for _, l := range strings.Split(o.stdout, "\n") {
		if m := reEntryHead.FindStringSubmatch(l); m != nil {
			fmt.Sscan(m[1], &last)
		}
	}
	if o.code != 0 || last == 0 {
		t.Fatalf("log:\n%s", o)
	}
	return last
}

// -h on each history command prints its reference with examples and
// touches nothing; bad arguments exit 2 and touch nothing either.
func TestCLIHistoryHelpTouchesNothing(t *testing.T) {
	nb := &notebook{t: t, bin: cliBinary(t)}
	base := t.TempDir()
	nb.env = []string{"SLIVINGDOC_STORE=file://" + filepath.ToSlash(filepath.Join(base, "store"))}
	a := nb.agent("a")
	a.env = append(a.env, "SLIVINGDOC_PRIVATE_ROOT="+filepath.Join(base, "private"))
	for _, args := range [][]string{{"log", "-h"}, {"show", "-h"}, {"diff", "-h"}, {"restore", "-h"}, {"revert", "-h"}} {
		o := a.run(args...)
		if o.code != 0 || !strings.Contains(o.stdout, "Usage: slivingdoc "+args[0]) || !strings.Contains(o.stdout, "Examples:") || !strings.Contains(o.stdout, "--store") {
			t.Fatalf("%s", o)
		}
	}
	for _, bad := range [][]string{
		{"show"}, {"show", "x"}, {"show", "1", "2"},
		{"diff", "1", "x"}, {"diff", "1", "2", "3"},
		{"restore", filepath.Join(base, "notes")}, {"restore", "--generation", "1"},
		{"revert", filepath.Join(base, "notes")}, {"revert", filepath.Join(base, "notes"), "x"},
		{"revert", filepath.Join(base, "notes"), "2", "--generation", "2"}, {"revert", "--generation", "2"},
		{"log", "--since", "yesterday-ish"},
	} {
		if o := a.run(bad...); o.code != 2 || o.stdout != "" || o.stderr == "" {
			t.Errorf("want exit 2 with a message on stderr:\n%s", o)
		}
	}
	if entries, err := os.ReadDir(base); err != nil || len(entries) != 0 {
		t.Fatalf("-h or a usage error created %v (%v)", entries, err)
	}
}
