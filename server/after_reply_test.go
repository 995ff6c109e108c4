package server

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/server/pstate"
)

// A long-lived engine replies before it keeps its published pack and
// records the highest generation, yet no commit downloads anything but
// `current` (the next call finds the pack kept) and Close leaves
// everything recorded.
func TestLongLivedCommitsLeaveTheirCacheWorkForAfterTheReply(t *testing.T) {
	store := memstore.New()
	a := newAgent(t, store, func(c *Config) { c.LongLived = true })
	// The work is slow, so a call or a Close that did not wait for it
	// would find it undone.
	a.e.afterReply.Slow = func() { time.Sleep(50 * time.Millisecond) }
	a.pull()
	a.write("a.md", "one\n")
	a.commit("seed")
	for i := range 5 {
		before := store.Calls(memstore.OpGet)
		a.appendTo("a.md", fmt.Sprintf("line %d\n", i))
		if r := a.commit("append"); r.Generation != uint64(i+2) {
			t.Fatalf("commit %d: generation %d", i, r.Generation)
		}
		if got := store.Calls(memstore.OpGet) - before; got > 1 {
			t.Fatalf("commit %d made %d GETs, want 1 (current)", i, got)
		}
	}
	if err := a.e.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(a.e.private, "stores", a.e.storeKey, "highest"))
	if f, ok := pstate.Unseal(data, 1); err != nil || !ok || strings.TrimLeft(f[0], "0") != "6" {
		t.Fatalf("highest after Close: %q %v, want 6", data, err)
	}
}
