package cas

import "fmt"

// UpdateTree returns the root tree ID of the tree base with changes
// applied: each path maps to its new file ID, or to the zero ID to remove
// it. It rebuilds only the directories on the paths of changes; every
// other subtree keeps its ID from base without being read. The tree
// objects it builds are put into sink (nil: only compute); unchanged
// subtrees are not, so src must be where the result's closure is kept.
// A zero base is the empty tree.
//
// The result is the ID WriteTree gives for the flat map of base with the
// changes applied. A change that does not fit base (removing a path that
// is not a file of base, a path that would be both a file and a
// directory) is an ErrInvalidPath: the caller's flat map and base
// disagree, and WriteTree over the whole map is the answer.
func UpdateTree(src Source, sink Sink, base ID, changes map[string]ID) (ID, error) {
	root := &changeNode{}
	for path, id := range changes {
		if err := root.add(path, id); err != nil {
			return ID{}, err
		}
	}
	id, _, err := root.apply(src, sink, base, "")
	return id, err
}

// changeNode is one directory of the changes UpdateTree applies.
type changeNode struct {
	files map[string]ID          // name -> new file ID (zero: remove)
	dirs  map[string]*changeNode // subdirectories with changes
}

func (n *changeNode) add(path string, id ID) error {
	segs, err := splitPath(path)
	if err != nil {
		return err
	}
	for _, s := range segs[:len(segs)-1] {
		next := n.dirs[s]
		if next == nil {
			if n.dirs == nil {
				n.dirs = make(map[string]*changeNode)
			}
			next = &changeNode{}
			n.dirs[s] = next
		}
		n = next
	}
	if n.files == nil {
		n.files = make(map[string]ID)
	}
	n.files[segs[len(segs)-1]] = id
	return nil
}

// apply writes directory prefix: base's entries (none for a zero base)
// with n's changes. It reports empty (and writes nothing) when no entry
// remains, since empty directories are not state.
func (n *changeNode) apply(src Source, sink Sink, base ID, prefix string) (ID, bool, error) {
	var entries []TreeEntry
	if !base.IsZero() {
		o, err := get(src, base, KindTree)
		if err != nil {
			return ID{}, false, treeErr(prefix, err)
		}
		if entries, err = DecodeTree(o); err != nil {
			return ID{}, false, treeErr(prefix, err)
		}
	}
	out := make([]TreeEntry, 0, len(entries)+len(n.files))
	seen := make(map[string]bool, len(n.files)+len(n.dirs))
	for _, e := range entries {
		id, changed := n.files[e.Name]
		sub, below := n.dirs[e.Name]
		if !changed && !below {
			out = append(out, e)
			continue
		}
		seen[e.Name] = true
		if changed {
			switch {
			case e.Kind == KindTree && id.IsZero():
				return ID{}, false, fmt.Errorf("%w: %q is not a file of the base tree", ErrInvalidPath, prefix+e.Name)
			case e.Kind == KindTree:
				// A file replaces this directory: every file below must go.
				if err := n.dropDir(src, sink, e, prefix); err != nil {
					return ID{}, false, err
				}
			case below && !id.IsZero():
				return ID{}, false, bothErr(prefix + e.Name)
			case below:
				// A directory replaces this (removed) file.
				if err := n.addDir(src, sink, e.Name, sub, ID{}, prefix, &out); err != nil {
					return ID{}, false, err
				}
			}
			if !id.IsZero() {
				out = append(out, TreeEntry{Name: e.Name, Kind: KindFile, ID: id})
			}
			continue
		}
		if e.Kind != KindTree {
			return ID{}, false, bothErr(prefix + e.Name)
		}
		if err := n.addDir(src, sink, e.Name, sub, e.ID, prefix, &out); err != nil {
			return ID{}, false, err
		}
	}
	for name, id := range n.files {
		if seen[name] {
			continue
		}
		if id.IsZero() {
			return ID{}, false, fmt.Errorf("%w: %q is not a file of the base tree", ErrInvalidPath, prefix+name)
		}
		out = append(out, TreeEntry{Name: name, Kind: KindFile, ID: id})
	}
	for name, sub := range n.dirs {
		if seen[name] {
			continue
		}
		if err := n.addDir(src, sink, name, sub, ID{}, prefix, &out); err != nil {
			return ID{}, false, err
		}
	}
	if len(out) == 0 && prefix != "" {
		return ID{}, true, nil
	}
	id, err := writeEntries(sink, out, prefix)
	return id, false, err
}

// addDir applies sub to the subtree base (zero: new) named name and
// appends it to out unless it ends up empty.
func (n *changeNode) addDir(src Source, sink Sink, name string, sub *changeNode, base ID, prefix string, out *[]TreeEntry) error {
	id, empty, err := sub.apply(src, sink, base, prefix+name+"/")
	if err != nil || empty {
		return err
	}
	*out = append(*out, TreeEntry{Name: name, Kind: KindTree, ID: id})
	return nil
}

// dropDir checks that the changes remove every file of the subtree e,
// which a file of the same name replaces.
func (n *changeNode) dropDir(src Source, sink Sink, e TreeEntry, prefix string) error {
	sub := n.dirs[e.Name]
	if sub == nil {
		return bothErr(prefix + e.Name)
	}
	_, empty, err := sub.apply(src, sink, e.ID, prefix+e.Name+"/")
	if err != nil {
		return err
	}
	if !empty {
		return bothErr(prefix + e.Name)
	}
	return nil
}
