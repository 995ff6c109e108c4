package cas_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"sort"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
)

// Identical content has the identical ID, whatever its history; a file up
// to InlineMax bytes is one object.
func ExampleWriteFile() {
	id, err := cas.WriteFile(nil, []byte("hello\n"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(id)
	// Output: f631e8fca3599f63e8a4c6e3a4f25b94035d443cc099d39d60833368b569e401
}

// A commit's objects go into a pack; the pack opens verified and serves
// the notebook back.
func ExamplePackWriter() {
	w := cas.NewPackWriter()
	readme, _ := cas.WriteFile(w, []byte("# Notes\n"))
	todo, _ := cas.WriteFile(w, []byte("- write the format doc\n"))
	root, err := cas.WriteTree(w, map[string]cas.ID{"README.md": readme, "plans/todo.md": todo})
	if err != nil {
		log.Fatal(err)
	}
	commit := cas.EncodeCommit(cas.Commit{Tree: root, Time: time.Unix(0, 0), Message: []byte("first")})
	if err := w.Put(commit); err != nil {
		log.Fatal(err)
	}
	data, err := w.Finish()
	if err != nil {
		log.Fatal(err)
	}

	p, err := cas.OpenPack(data)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("objects:", p.Len(), "closure:", cas.CheckClosure(p, commit.ID))
	files, _ := cas.ReadTree(p, root)
	paths := make([]string, 0, len(files))
	for path := range files {
		paths = append(paths, path)
	}
	sort.Strings(paths)
	for _, path := range paths {
		content, _ := cas.ReadFile(p, files[path])
		fmt.Printf("%s: %q\n", path, content)
	}
	// Output:
	// objects: 5 closure: <nil>
	// README.md: "# Notes\n"
	// plans/todo.md: "- write the format doc\n"
}

// Content-defined chunks: boundaries depend on the bytes around them, so
// an edit moves only nearby boundaries.
func ExampleChunks() {
	content := make([]byte, 200<<10) // zeros never meet the boundary condition
	for chunk := range cas.Chunks(content) {
		fmt.Print(len(chunk), " ")
	}
	fmt.Println()
	// Output: 65536 65536 65536 8192
}

// The local store keeps verified packs on disk and reads single objects.
func ExampleStore() {
	dir, _ := os.MkdirTemp("", "cas-example")
	defer os.RemoveAll(dir)
	s, err := cas.OpenStore(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	w := cas.NewPackWriter()
	id, _ := cas.WriteFile(w, []byte("kept on disk\n"))
	data, _ := w.Finish()
	if err := s.AddPack("1-example.pack", data); err != nil {
		log.Fatal(err)
	}
	content, err := cas.ReadFile(s, id)
	fmt.Printf("%q %v\n", content, err)
	// Output: "kept on disk\n" <nil>
}

// An increment's pack stores the new directory tree as its change from
// the parent's, which the reader already holds: one entry instead of all.
func ExamplePackWriter_PutDelta() {
	parent := cas.NewObjectSet() // what every reader of the increment holds
	files := map[string]cas.ID{}
	for i := range 50 {
		files[fmt.Sprintf("note-%02d.md", i)], _ = cas.WriteFile(parent, []byte(fmt.Sprintf("note %d\n", i)))
	}
	oldID, _ := cas.WriteTree(parent, files)
	oldTree, _ := parent.Get(oldID)

	next := cas.NewObjectSet()
	files["note-07.md"], _ = cas.WriteFile(next, []byte("note 7, one line more\n"))
	newID, _ := cas.WriteTree(next, files)
	newTree, _ := next.Get(newID)

	w := cas.NewPackWriter()
	_, depth, _ := cas.GetDepth(parent, oldID) // 0: an ObjectSet holds trees whole
	if err := w.PutDelta(newTree, oldTree, depth); err != nil {
		log.Fatal(err)
	}
	data, _ := w.Finish()
	p, _ := cas.OpenPack(data)
	_, err := p.Get(newID)
	fmt.Println("version", p.Version(), "alone:", errors.Is(err, cas.ErrMissingBase))
	got, err := p.WithBases(parent).Get(newID)
	fmt.Println("with the parent's trees:", got.ID == newID, err)
	fmt.Printf("a tree of %d bytes in a pack of %d\n", len(newTree.Body), len(data))
	// Output:
	// version 2 alone: true
	// with the parent's trees: true <nil>
	// a tree of 2255 bytes in a pack of 239
}
