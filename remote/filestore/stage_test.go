package filestore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/filestore"
)

// A staged write (remote.Stager) keeps the conditional writes' guarantees:
// its condition is checked at the write, exactly one of racing staged
// replaces wins, nothing is visible before the write, and no temporary
// file outlives it or its discard.
func TestStagedWrites(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := filestore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	st := s.(remote.Stager)
	noTemps := func(when string) {
		t.Helper()
		if ents, err := os.ReadDir(filepath.Join(dir, ".tmp")); err != nil || len(ents) != 0 {
			t.Fatalf("%s: temporary files left: %v %v", when, ents, err)
		}
	}
	get := func() string {
		t.Helper()
		data, _, err := s.Get(ctx, "current")
		if errors.Is(err, remote.ErrNotFound) {
			return "<absent>"
		}
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}

	// Discarded unwritten: nothing appears.
	st.Stage([]byte("never")).Discard()
	noTemps("after a discard")
	if got := get(); got != "<absent>" {
		t.Fatalf("a discarded staged write is visible: %q", got)
	}

	w := st.Stage([]byte("one"))
	etag, err := w.CreateIfAbsent(ctx, "current")
	w.Discard()
	if err != nil || get() != "one" {
		t.Fatalf("staged create: %v %q", err, get())
	}
	noTemps("after a staged create")
	w = st.Stage([]byte("again"))
	if _, err := w.CreateIfAbsent(ctx, "current"); !errors.Is(err, remote.ErrPrecondition) {
		t.Fatalf("staged create over an object: %v", err)
	}
	w.Discard()
	noTemps("after a refused staged create")

	w = st.Stage([]byte("stale"))
	if _, err := w.ReplaceIfMatch(ctx, "current", `"not the etag"`); !errors.Is(err, remote.ErrPrecondition) {
		t.Fatalf("staged replace with a stale etag: %v", err)
	}
	if _, err := w.ReplaceIfMatch(ctx, "current", etag); err == nil {
		t.Fatal("a staged write was made twice")
	}
	w.Discard()
	noTemps("after a refused staged replace")
	if got := get(); got != "one" {
		t.Fatalf("a refused staged replace changed the object: %q", got)
	}

	// Racing staged replaces holding the same etag: exactly one wins.
	var wg sync.WaitGroup
	wins := make(chan string, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			data := []byte{'w', byte('0' + i)}
			w := st.Stage(data)
			defer w.Discard()
			if _, err := w.ReplaceIfMatch(ctx, "current", etag); err == nil {
				wins <- string(data)
			} else if !errors.Is(err, remote.ErrPrecondition) {
				t.Errorf("racing staged replace: %v", err)
			}
		}()
	}
	wg.Wait()
	close(wins)
	var won []string
	for w := range wins {
		won = append(won, w)
	}
	if len(won) != 1 || get() != won[0] {
		t.Fatalf("racing staged replaces: winners %q, object %q", won, get())
	}
	noTemps("after racing staged replaces")

	// A cancelled staged write does not land.
	_, cur, err := s.Get(ctx, "current")
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	w = st.Stage([]byte("cancelled"))
	if _, err := w.ReplaceIfMatch(cctx, "current", cur); err == nil || get() != won[0] {
		t.Fatalf("a cancelled staged replace landed: %v %q", err, get())
	}
	w.Discard()
	noTemps("after a cancelled staged replace")
}
