package objcache

import (
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
)

// The contents a long-lived engine keeps stay within their budget, the
// oldest going first; a one-shot engine keeps none.
func TestRecentContentsBudget(t *testing.T) {
	r := &Recent{byID: map[cas.ID][]byte{}, maxSize: 10, maxFile: 6}
	r.Put(cas.ID{1}, []byte("aaaa"))
	r.Put(cas.ID{2}, []byte("bbbb"))
	r.Put(cas.ID{3}, []byte("ccccccc")) // over maxFile: not kept
	r.Put(cas.ID{4}, []byte("dddd"))    // 12 bytes: the oldest goes
	if _, ok := r.Get(cas.ID{1}); ok {
		t.Fatal("the oldest entry was kept over the budget")
	}
	for _, id := range []cas.ID{{2}, {4}} {
		if _, ok := r.Get(id); !ok {
			t.Fatalf("entry %v dropped", id[0])
		}
	}
	if _, ok := r.Get(cas.ID{3}); ok {
		t.Fatal("a file over maxFile was kept")
	}
	var none *Recent
	none.Put(cas.ID{5}, []byte("x"))
	if _, ok := none.Get(cas.ID{5}); ok {
		t.Fatal("a nil Recent kept something")
	}
}
