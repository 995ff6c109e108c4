//go:build unix

package main

import (
	"maps"
	"strings"
	"syscall"
	"testing"

	"github.com/slivingdoc/slivingdoc/server"
)

// kill -9 after a commit registered its proposal on a version-4 store,
// just before its conditional write of `current`: the next commit
// resumes the same publication, which is accepted exactly once, whether
// another writer's fold took it meanwhile or not, and publishes the edits
// made since as a publication of its own.
func TestCLIVersion4CrashAfterRegister(t *testing.T) {
	bin := cliFailpointBinary(t)
	for _, folded := range []bool{false, true} {
		name := "alone"
		if folded {
			name = "folded-by-another"
		}
		t.Run(name, func(t *testing.T) {
			nb := newNotebook(t, backends[0])
			seedInProcess(t, nb)
			a := nb.agent("a")
			a.pull()
			a.write("a.md", "from a\n")
			a.bin = bin
			o := a.runEnv([]string{"SLIVINGDOC_CRASH_AT=store.write|current#1"}, "commit", a.dir, "-m", "a")
			if o.signal != syscall.SIGKILL {
				t.Fatalf("the crash point was not reached:\n%s", o)
			}
			a.bin = nb.bin
			want := map[string]string{"seed.md": "seed\n", "a.md": "from a\n", "later.md": "later\n"}
			gens := uint64(3) // seed, a's, a's later edit
			if folded {
				b := nb.agent("b")
				b.pull()
				b.write("b.md", "from b\n")
				b.commit("b")
				want["b.md"] = "from b\n"
				gens++
			}
			a.write("later.md", "later\n")
			if r := a.commit("later"); r.generation != gens || r.files["later.md"] != [2]int{1, 0} || len(r.files) != 1 {
				t.Fatalf("the commit after the crash: %+v", r)
			}
			if got := a.files(); !maps.Equal(got, want) {
				t.Fatalf("a's directory:\n got %v\nwant %v", got, want)
			}
			o = a.run("log")
			if o.code != 0 || strings.Count(o.stdout, "generation ") != int(gens) {
				t.Fatalf("log:\n%s", o)
			}
			obs := nb.agent("observer")
			if r := obs.pull(); r.generation != gens || !maps.Equal(obs.files(), want) {
				t.Fatalf("observer: %+v %v", r, obs.files())
			}
			if o := obs.run("verify"); o.code != 0 {
				t.Fatalf("verify:\n%s", o)
			}
		})
	}
}

// kill -9 at the engine's failpoint after the store accepted a v4 commit,
// before L and the baseline are updated: the next pull takes the
// accepted change as common ground (no conflict with itself), and the
// next commit publishes nothing more.
func TestCLIVersion4CrashAfterPublish(t *testing.T) {
	bin := cliFailpointBinary(t)
	nb := newNotebook(t, backends[0])
	seedInProcess(t, nb)
	a := nb.agent("a")
	a.pull()
	a.write("seed.md", "seed\nmore\n")
	a.bin = bin
	o := a.runEnv([]string{"SLIVINGDOC_FAILPOINT=" + server.FailAfterPublish}, "commit", a.dir, "-m", "a")
	if o.signal != syscall.SIGKILL {
		t.Fatalf("the failpoint did not fire:\n%s", o)
	}
	a.bin = nb.bin
	b := nb.agent("b")
	b.pull()
	b.write("seed.md", "seed\nmore\nfrom b\n")
	b.commit("b")
	if r := a.pull(); r.generation != 3 {
		t.Fatalf("pull after the crash: %+v", r)
	}
	want := map[string]string{"seed.md": "seed\nmore\nfrom b\n"}
	if got := a.files(); !maps.Equal(got, want) {
		t.Fatalf("a's directory:\n got %v\nwant %v", got, want)
	}
	if r := a.commit("nothing"); r.generation != 3 {
		t.Fatalf("a commit with nothing left: %+v", r)
	}
}
