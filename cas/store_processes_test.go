package cas_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
)

// processPack is the pack child process c adds as its i-th, and the file
// in it. Children share half their pack names (and contents), so that two
// processes add the same name at the same time.
func processPack(t testing.TB, c, i int) (name string, data []byte, id cas.ID) {
	owner := c
	if i%2 == 0 {
		owner = 0 // shared by every child
	}
	content := []byte(fmt.Sprintf("child %d, pack %d\n", owner, i))
	w := cas.NewPackWriter()
	id, err := cas.WriteFile(w, content)
	if err != nil {
		t.Fatal(err)
	}
	if data, err = w.Finish(); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%d-%d.pack", owner, i), data, id
}

const processPacks = 40

// TestStoreHelperProcess is the child of TestStoreSharedByProcesses.
func TestStoreHelperProcess(t *testing.T) {
	dir, child := os.Getenv("CAS_STORE_DIR"), os.Getenv("CAS_STORE_CHILD")
	if dir == "" {
		t.Skip("runs only as a child of TestStoreSharedByProcesses")
	}
	c, _ := strconv.Atoi(child)
	s, err := cas.OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The last child adds its packs five at a time, in bundles.
	group := 1
	if c == 3 {
		group = 5
	}
	for i := 0; i < processPacks; i += group {
		var packs []cas.NamedPack
		for j := i; j < i+group; j++ {
			name, data, _ := processPack(t, c, j)
			packs = append(packs, cas.NamedPack{Name: name, Data: data})
		}
		if err := s.AddPacks(packs); err != nil {
			t.Fatal(err)
		}
	}
}

// Several processes add packs to one directory at once, alone or in
// bundles, some under the same names, while this process reads: every pack ends up complete and
// every object readable.
func TestStoreSharedByProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	reader := openStore(t, dir)
	children := []int{1, 2, 3}
	var wg sync.WaitGroup
	errs := make(chan error, len(children))
	for _, c := range children {
		cmd := exec.Command(os.Args[0], "-test.run=^TestStoreHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), "CAS_STORE_DIR="+dir, "CAS_STORE_CHILD="+strconv.Itoa(c))
		wg.Go(func() {
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("child %d: %v\n%s", c, err, out)
			}
		})
	}
	// Read while the children write: an object is either not there yet or
	// whole, never read from a partial pack.
	for i := range 400 {
		_, _, id := processPack(t, children[i%len(children)], i%processPacks)
		if _, err := reader.Get(id); err != nil && !errors.Is(err, cas.ErrNotFound) {
			t.Fatalf("read during concurrent adds: %v", err)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := reader.Refresh(); err != nil { // HasPack looks for plain pack files only
		t.Fatal(err)
	}
	for _, c := range children {
		for i := range processPacks {
			name, _, id := processPack(t, c, i)
			if !reader.HasPack(name) {
				t.Fatalf("pack %s missing", name)
			}
			if err := reader.VerifyPack(name); err != nil {
				t.Fatal(err)
			}
			if got, err := cas.ReadFile(reader, id); err != nil || len(got) == 0 {
				t.Fatalf("file of %s: %v", name, err)
			}
		}
	}
	if _, broken := reader.Packs(); len(broken) != 0 {
		t.Fatalf("broken packs: %v", broken)
	}
}

// TestStoreIndexHelperProcess is the child of
// TestStoreIndexSharedByOpeningProcesses: it opens the store once per pack
// it adds, and checks that each open holds every pack that was in the
// directory before it began.
func TestStoreIndexHelperProcess(t *testing.T) {
	dir, child := os.Getenv("CAS_INDEX_DIR"), os.Getenv("CAS_INDEX_CHILD")
	if dir == "" {
		t.Skip("runs only as a child of TestStoreIndexSharedByOpeningProcesses")
	}
	c, _ := strconv.Atoi(child)
	for i := range processPacks {
		des, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		s, err := cas.OpenStore(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, de := range des {
			var owner, j int
			if _, err := fmt.Sscanf(de.Name(), "%d-%d.pack", &owner, &j); err != nil {
				continue // the indexes, a temporary file
			}
			if _, _, id := processPack(t, owner, j); !s.Has(id) {
				t.Fatalf("open %d: pack %s, in the directory before the open, is not loaded", i, de.Name())
			}
		}
		name, data, _ := processPack(t, c, i)
		if err := s.AddPack(name, data); err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
}

// Several processes open one directory again and again, each open
// rewriting the merged index or its side index while the others add
// packs: no open misses a pack that was there before it began, and at the
// end a new open holds every pack.
func TestStoreIndexSharedByOpeningProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	children := []int{1, 2, 3}
	var wg sync.WaitGroup
	errs := make(chan error, len(children))
	for _, c := range children {
		cmd := exec.Command(os.Args[0], "-test.run=^TestStoreIndexHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), "CAS_INDEX_DIR="+dir, "CAS_INDEX_CHILD="+strconv.Itoa(c))
		wg.Go(func() {
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("child %d: %v\n%s", c, err, out)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	s := openStore(t, dir)
	for _, c := range children {
		for i := range processPacks {
			name, _, id := processPack(t, c, i)
			if !s.Has(id) {
				t.Fatalf("pack %s missing", name)
			}
			if got, err := cas.ReadFile(s, id); err != nil || len(got) == 0 {
				t.Fatalf("file of %s: %v", name, err)
			}
		}
	}
	if _, broken := s.Packs(); len(broken) != 0 {
		t.Fatalf("broken packs: %v", broken)
	}
}
