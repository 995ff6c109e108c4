package cas

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// TreeEntry is one entry of a tree object: a name (one path segment), the
// kind of the object it names (KindFile or KindTree) and that object's ID.
type TreeEntry struct {
	Name string
	Kind Kind
	ID   ID
}

// Tree object layout (docs/format.md): kind, count, then per entry the
// entry kind, name length, name and ID.
const (
	treeHeader   = 1 + 4
	treeEntryMin = 1 + 2 + 1 + 32 // the smallest entry: a one-byte name
	maxNameLen   = 1<<16 - 1
)

// MaxTreeFiles bounds the files ReadTree returns. Trees may share subtrees,
// so a small hostile tree could otherwise describe exponentially many paths.
const MaxTreeFiles = 1 << 22

// treeFileLimit is MaxTreeFiles; tests lower it.
var treeFileLimit = MaxTreeFiles

// EncodeTree returns the canonical tree object of entries, which must be
// sorted by name bytes, with unique valid names and non-zero IDs.
func EncodeTree(entries []TreeEntry) (Object, error) {
	size := treeHeader
	for _, e := range entries {
		size += treeEntryMin - 1 + len(e.Name)
	}
	body := make([]byte, treeHeader, size)
	body[0] = byte(KindTree)
	le.PutUint32(body[1:], uint32(len(entries)))
	for _, e := range entries {
		if len(e.Name) > maxNameLen {
			return Object{}, fmt.Errorf("%w: tree entry name of %d bytes", ErrInvalidObject, len(e.Name))
		}
		body = append(body, byte(e.Kind))
		body = le.AppendUint16(body, uint16(len(e.Name)))
		body = append(body, e.Name...)
		body = append(body, e.ID[:]...)
	}
	if _, err := decodeTree(body); err != nil {
		return Object{}, fmt.Errorf("%w: %w", ErrInvalidObject, err)
	}
	return newObject(body), nil
}

// DecodeTree decodes a tree object, refusing any other kind.
func DecodeTree(o Object) ([]TreeEntry, error) {
	if o.Kind != KindTree {
		return nil, corruptf("object is a %v, want a tree", o.Kind)
	}
	return decodeTree(o.Body)
}

func decodeTree(body []byte) ([]TreeEntry, error) { return parseTree(body, true) }

// checkTree applies decodeTree's rules without keeping the entries: a
// pack's verification and every Sink check a tree that way, and a
// 1,000-entry root tree is checked on every commit of a flat notebook.
func checkTree(body []byte) error {
	_, err := parseTree(body, false)
	return err
}

func parseTree(body []byte, keep bool) ([]TreeEntry, error) {
	r := reader{b: body}
	if Kind(r.u8("tree kind")) != KindTree {
		return nil, corruptf("not a tree object")
	}
	count := r.u32("tree entry count")
	if r.err != nil {
		return nil, r.err
	}
	if uint64(count) > uint64(len(r.b)/treeEntryMin) {
		return nil, corruptf("tree declares %d entries in %d bytes", count, len(r.b))
	}
	var entries []TreeEntry
	if keep {
		entries = make([]TreeEntry, count)
	}
	var prev []byte
	for i := range int(count) {
		kind := Kind(r.u8("entry kind"))
		name := r.take(int(r.u16("entry name length")), "entry name")
		id := r.id("entry ID")
		if r.err != nil {
			return nil, r.err
		}
		if kind != KindFile && kind != KindTree {
			return nil, corruptf("tree entry %d has kind %v", i, kind)
		}
		if err := checkName(name); err != nil {
			return nil, corruptf("tree entry %d: %v", i, err)
		}
		if id.IsZero() {
			return nil, corruptf("tree entry %d has the zero ID", i)
		}
		if i > 0 && bytes.Compare(prev, name) >= 0 {
			return nil, corruptf("tree entries %d and %d are not in strict name order", i-1, i)
		}
		prev = name
		if keep {
			entries[i] = TreeEntry{Kind: kind, Name: string(name), ID: id}
		}
	}
	return entries, r.done("tree")
}

// checkName applies the format's rules for one path segment. The server
// applies the stricter content rules (DESIGN §6) before anything reaches
// here; these are only what the tree structure itself needs.
func checkName[S ~string | ~[]byte](name S) error {
	switch {
	case len(name) == 0:
		return fmt.Errorf("empty name")
	case string(name) == "." || string(name) == "..":
		return fmt.Errorf("name %q", name)
	}
	for i := range len(name) {
		if name[i] == '/' || name[i] == 0 {
			return fmt.Errorf("name contains '/' or NUL")
		}
	}
	return nil
}

// WriteTree builds the tree objects for a flat map of slash-separated file
// paths to file IDs, puts them into sink (nil: only compute), and returns
// the root tree ID. An empty map yields the ID of the empty tree.
func WriteTree(sink Sink, files map[string]ID) (ID, error) {
	root := &dirNode{}
	for path, id := range files {
		if id.IsZero() {
			return ID{}, fmt.Errorf("%w: %q has the zero file ID", ErrInvalidPath, path)
		}
		if err := root.add(path, id); err != nil {
			return ID{}, err
		}
	}
	return root.write(sink, "")
}

// dirNode is one directory while WriteTree collects paths.
type dirNode struct {
	entries []TreeEntry         // files, and directories once written
	dirs    map[string]*dirNode // subdirectories by name
}

// splitPath splits a slash-separated tree path into its segments, each a
// valid name.
func splitPath(path string) ([]string, error) {
	segs := strings.Split(path, "/")
	for _, s := range segs {
		if err := checkName(s); err != nil {
			return nil, fmt.Errorf("%w: %q: %v", ErrInvalidPath, path, err)
		}
	}
	return segs, nil
}

func (d *dirNode) add(path string, id ID) error {
	segs, err := splitPath(path)
	if err != nil {
		return err
	}
	for _, s := range segs[:len(segs)-1] {
		next := d.dirs[s]
		if next == nil {
			if d.dirs == nil {
				d.dirs = make(map[string]*dirNode)
			}
			next = &dirNode{}
			d.dirs[s] = next
		}
		d = next
	}
	d.entries = append(d.entries, TreeEntry{Name: segs[len(segs)-1], Kind: KindFile, ID: id})
	return nil
}

func (d *dirNode) write(sink Sink, prefix string) (ID, error) {
	for name, sub := range d.dirs {
		id, err := sub.write(sink, prefix+name+"/")
		if err != nil {
			return ID{}, err
		}
		d.entries = append(d.entries, TreeEntry{Name: name, Kind: KindTree, ID: id})
	}
	return writeEntries(sink, d.entries, prefix)
}

// writeEntries sorts the entries of directory prefix, encodes them and
// puts the tree into sink. Files and directories are each unique by name,
// so an equal neighbour is a file that is also a directory ("a" and "a/b").
func writeEntries(sink Sink, entries []TreeEntry, prefix string) (ID, error) {
	slices.SortFunc(entries, func(a, b TreeEntry) int { return cmp.Compare(a.Name, b.Name) })
	for i := 1; i < len(entries); i++ {
		if entries[i-1].Name == entries[i].Name {
			return ID{}, bothErr(prefix + entries[i].Name)
		}
	}
	o, err := EncodeTree(entries)
	if err != nil {
		return ID{}, err
	}
	return o.ID, put(sink, o)
}

func bothErr(path string) error {
	return fmt.Errorf("%w: %q is both a file and a directory", ErrInvalidPath, path)
}

// ReadTree walks the tree root and returns the flat map of file paths to
// file IDs. A subtree must not be empty (empty directories are not state).
func ReadTree(src Source, root ID) (map[string]ID, error) {
	files := make(map[string]ID)
	err := walkTree(src, root, nil, func(path string, e TreeEntry) error {
		if e.Kind == KindFile {
			if len(files) == treeFileLimit {
				return corruptf("tree holds more than %d files", treeFileLimit)
			}
			files[path] = e.ID
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return files, nil
}

// walkTree calls visit for every entry below root (each directory's
// entries in name order, subtrees depth first) with the entry's full
// slash-separated path. Tree objects are read and checked; file objects
// are not. With a non-nil seen, a subtree whose ID is in seen is skipped
// and every tree read is added to it.
func walkTree(src Source, root ID, seen map[ID]bool, visit func(path string, e TreeEntry) error) error {
	type pending struct {
		prefix string
		id     ID
	}
	stack := []pending{{"", root}}
	for len(stack) > 0 {
		t := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		o, err := get(src, t.id, KindTree)
		if err != nil {
			return treeErr(t.prefix, err)
		}
		entries, err := DecodeTree(o)
		if err != nil {
			return treeErr(t.prefix, err)
		}
		if len(entries) == 0 && t.prefix != "" {
			return treeErr(t.prefix, corruptf("empty subtree"))
		}
		for _, e := range entries {
			if err := visit(t.prefix+e.Name, e); err != nil {
				return err
			}
		}
		// Push in reverse so that subtrees are read in name order.
		for i := len(entries) - 1; i >= 0; i-- {
			if e := entries[i]; e.Kind == KindTree && !seen[e.ID] {
				if seen != nil {
					seen[e.ID] = true
				}
				stack = append(stack, pending{t.prefix + e.Name + "/", e.ID})
			}
		}
	}
	return nil
}

func treeErr(prefix string, err error) error {
	if prefix == "" {
		return fmt.Errorf("root tree: %w", err)
	}
	return fmt.Errorf("tree %q: %w", strings.TrimSuffix(prefix, "/"), err)
}
