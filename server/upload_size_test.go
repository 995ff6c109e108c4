package server

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

// A 1 KiB append to a 1 MiB file uploads a pack proportional to the
// change, not to the file (DESIGN §10: ≤ 16 KiB): the commit skips every
// object the accepted chain already holds.
func TestAppendUploadsOnlyTheChange(t *testing.T) {
	store := memstore.New()
	a := newAgent(t, store)
	a.pull()
	var big strings.Builder
	for i := 0; big.Len() < 1<<20; i++ {
		fmt.Fprintf(&big, "line %d of a large note, with some words to make it realistic\n", i)
	}
	a.write("big.md", big.String())
	for i := range 50 {
		a.write(fmt.Sprintf("other/%02d.md", i), "small\n")
	}
	a.commit("big")
	before := packBytes(t, store)

	a.appendTo("big.md", strings.Repeat("appended text\n", 1024/14+1))
	a.commit("append")
	got := packBytes(t, store) - before
	t.Logf("a 1 KiB append to a 1 MiB file uploaded %d bytes", got)
	if got > 16<<10 {
		t.Fatalf("a 1 KiB append uploaded %d bytes", got)
	}
	b := newAgent(t, store)
	b.pull()
	if b.read("big.md") != a.read("big.md") {
		t.Fatal("content differs after the append")
	}
}

func packBytes(t *testing.T, store remote.Store) int64 {
	t.Helper()
	infos, err := store.List(context.Background(), "packs/")
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, i := range infos {
		n += i.Size
	}
	return n
}
