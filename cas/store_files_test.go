package cas_test

import (
	"fmt"
	"os"
	"runtime"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
)

func openFDs(t *testing.T) int {
	des, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd:", err)
	}
	return len(des)
}

// Reading from hundreds of packs keeps a bounded number of files open,
// and Close releases them all.
func TestStoreBoundsOpenFiles(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts descriptors through /proc/self/fd")
	}
	dir := t.TempDir()
	s, err := cas.OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ids []cas.ID
	for i := range 150 {
		data, id := packOf(t, []byte(fmt.Sprintf("pack %d\n", i)))
		if err := s.AddPack(fmt.Sprintf("%d.pack", i), data); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	before := openFDs(t)
	for round := range 2 {
		for i, id := range ids {
			if got, err := cas.ReadFile(s, id); err != nil || string(got) != fmt.Sprintf("pack %d\n", i) {
				t.Fatalf("round %d, pack %d: %v", round, i, err)
			}
		}
	}
	if open := openFDs(t) - before; open > 64 {
		t.Fatalf("%d files open after reading 150 packs, want at most 64", open)
	}
	s.Close()
	if open := openFDs(t) - before; open > 0 {
		t.Fatalf("%d files still open after Close", open)
	}
}
