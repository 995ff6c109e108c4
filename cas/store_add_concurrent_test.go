package cas_test

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
)

// Goroutines of one process may add packs at once (a sync fetches several
// in parallel), including the same name twice: every add succeeds, each
// name is stored once, every object is readable and no temporary file is
// left behind.
func TestAddPackConcurrently(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	const packs = 20
	data := make([][]byte, packs)
	ids := make([]cas.ID, packs)
	for i := range packs {
		data[i], ids[i] = packOf(t, []byte(fmt.Sprintf("note %d\n", i)))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8*packs)
	for g := range 8 {
		wg.Go(func() {
			for i := range packs {
				j := (i + g*7) % packs
				if err := s.AddPack(fmt.Sprintf("%d.pack", j), data[j]); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	names, broken := s.Packs()
	if len(names) != packs || len(broken) != 0 {
		t.Fatalf("%d packs stored (%d broken), want %d", len(names), len(broken), packs)
	}
	for i, id := range ids {
		if got, err := cas.ReadFile(s, id); err != nil || string(got) != fmt.Sprintf("note %d\n", i) {
			t.Fatalf("file %d: %q %v", i, got, err)
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Fatalf("temporary file %s left behind", e.Name())
		}
	}
}
