package merge

import (
	"os"
	"testing"
)

func TestDebugCase(t *testing.T) {
	d := os.Getenv("MERGE_CASE")
	if d == "" {
		t.Skip()
	}
	rd := func(n string) []byte { b, _ := os.ReadFile(d + "/" + n); return b }
	in := newInterner(0)
	b, l, r := in.split(rd("base")), in.split(rd("local")), in.split(rd("remote"))
	t.Logf("local hunks %+v", diff(b.sym, l.sym))
	t.Logf("remote hunks %+v", diff(b.sym, r.sym))
	rs := regions(b, l, r)
	t.Logf("regions %+v", rs)
	rs = refine(l, r, rs)
	t.Logf("refined %+v", rs)
}
