//go:build unix

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/slivingdoc/slivingdoc/server"
)

// A commit accepted and then killed, its object cache then gone (a full
// disk kept none of it, an operator cleared it), and the file edited
// again: the next call's merge base is the baseline with the accepted
// publication applied, whose content was first published after the
// baseline's generation. It is fetched again from the store (a cache is a
// cache), the call merges cleanly, and nothing is refused for good.
func TestCLIKilledCommitThenCacheGoneStillMerges(t *testing.T) {
	bin := cliFailpointBinary(t)
	nb := newNotebook(t, backends[0])
	a, b := nb.agent("a"), nb.agent("b")
	a.pull()
	a.write("f.md", lines(10, nil))
	a.commit("base")
	b.pull()
	a.write("f.md", lines(10, map[int]string{2: "a two"}))

	a.bin = bin
	if o := a.runEnv([]string{"SLIVINGDOC_FAILPOINT=" + server.FailAfterPublish}, "commit", a.dir, "-m", "a two"); o.signal != syscall.SIGKILL {
		t.Fatalf("the failpoint did not fire:\n%s", o)
	}
	a.bin = nb.bin
	if err := os.RemoveAll(filepath.Join(a.priv, "stores")); err != nil {
		t.Fatal(err)
	}
	a.write("f.md", lines(10, map[int]string{2: "a two", 3: "a three"}))
	// b's commits checkpoint often: a's next sync fetches a checkpoint
	// that no longer holds the version a published.
	b.pull()
	b.write("f.md", lines(10, map[int]string{2: "a two", 8: "b eight"}))
	for i := range 4 {
		b.write(fmt.Sprintf("b%d.md", i), "b\n")
		mustOK(t, b.runEnv([]string{"SLIVINGDOC_CHECKPOINT_PACKS=2"}, "commit", b.dir, "-m", fmt.Sprint("b ", i)))
	}

	mustOK(t, a.run("pull", a.dir))
	want := lines(10, map[int]string{2: "a two", 3: "a three", 8: "b eight"})
	if got := a.read("f.md"); got != want {
		t.Fatalf("a's f.md = %q, want %q", got, want)
	}
	a.commit("a three")
	b.pull()
	if got := b.read("f.md"); got != want {
		t.Fatalf("b's f.md = %q, want %q", got, want)
	}
}
