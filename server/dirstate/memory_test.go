package dirstate

import (
	"os"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/server/pstate"
	"github.com/slivingdoc/slivingdoc/server/workdir"
)

func TestStatCacheRewrittenInPlace(t *testing.T) {
	d := pstate.Dir{Path: t.TempDir()}
	m := workdir.NewStatCache()
	m.Set("a.md", workdir.Entry{Size: 3, Mtime: 1, Ctime: 1, Ino: 9, ID: cas.Sum([]byte("a")), Trusted: true, Key: "a.md"})
	if err := d.SaveStatCache(m); err != nil {
		t.Fatal(err)
	}
	path := d.File(pstate.StatCacheFile)
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	first := StatsIdentityOf(path)
	m.Set("a.md", workdir.Entry{Size: 4, Mtime: 2, Ctime: 2, Ino: 9, ID: cas.Sum([]byte("a!")), Trusted: true, Key: "a.md"})
	if err := d.SaveStatCache(m); err != nil {
		t.Fatal(err)
	}
	if after, err := os.Stat(path); err != nil || !os.SameFile(before, after) {
		t.Fatalf("the stat cache was replaced, not rewritten in place (%v)", err)
	}
	if e, ok := d.LoadStatCache().Get("a.md"); !ok || e.Size != 4 {
		t.Fatalf("after the rewrite: %+v %v", e, ok)
	}
	second := StatsIdentityOf(path)
	first.mtime, first.ctime = second.mtime, second.ctime // one tick of the clock
	if first == second {
		t.Fatal("two versions of the stat cache have one identity")
	}
	data, _ := os.ReadFile(path)
	data[len(data)/2] ^= 1
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := d.LoadStatCache(); got.Len() != 0 {
		t.Fatalf("a torn stat cache read as %d entries", got.Len())
	}
}
