package cas

import (
	"fmt"
	"time"
)

// Commit is a decoded commit object.
type Commit struct {
	Tree        ID
	Parent      ID     // zero for the first commit
	Publication string // the publication ID (a UUIDv7 string) of the attempt that made it
	Time        time.Time
	Message     []byte
}

// Commit object layout (docs/format.md): kind, tree, parent, seconds,
// then the length-prefixed publication and message.
const commitFixed = 1 + 32 + 32 + 8

// EncodeCommit returns the canonical commit object (time truncated to UTC
// seconds). A commit is built by this process from values it checked, so
// the only rule that can fail, a zero tree ID, is a programming error; it
// still yields an object, which every decoder refuses.
func EncodeCommit(c Commit) Object {
	body := make([]byte, commitFixed, commitFixed+4+len(c.Publication)+4+len(c.Message))
	body[0] = byte(KindCommit)
	copy(body[1:], c.Tree[:])
	copy(body[33:], c.Parent[:])
	le.PutUint64(body[65:], uint64(c.Time.Unix()))
	body = le.AppendUint32(body, uint32(len(c.Publication)))
	body = append(body, c.Publication...)
	body = le.AppendUint32(body, uint32(len(c.Message)))
	body = append(body, c.Message...)
	return newObject(body)
}

// ReadCommit gets the object id from src and decodes it as a commit: src's
// error (ErrNotFound, say) as it is, or DecodeCommit's.
func ReadCommit(src Source, id ID) (Commit, error) {
	o, err := src.Get(id)
	if err != nil {
		return Commit{}, err
	}
	return DecodeCommit(o)
}

// DecodeCommit decodes a commit object, refusing any other kind.
func DecodeCommit(o Object) (Commit, error) {
	if o.Kind != KindCommit {
		return Commit{}, corruptf("object is a %v, want a commit", o.Kind)
	}
	return decodeCommit(o.Body)
}

func decodeCommit(body []byte) (Commit, error) {
	r := reader{b: body}
	if Kind(r.u8("commit kind")) != KindCommit {
		return Commit{}, corruptf("not a commit object")
	}
	var c Commit
	c.Tree = r.id("commit tree")
	c.Parent = r.id("commit parent")
	c.Time = time.Unix(int64(r.u64("commit time")), 0).UTC()
	c.Publication = string(r.take(int(r.u32("publication length")), "publication"))
	msg := r.take(int(r.u32("message length")), "message")
	if err := r.done("commit"); err != nil {
		return Commit{}, err
	}
	if c.Tree.IsZero() {
		return Commit{}, corruptf("commit has the zero tree ID")
	}
	c.Message = append([]byte{}, msg...)
	return c, nil
}

// CheckClosure walks the commit, its tree, every file and chunk it reaches
// (not its parents) and returns the first missing or corrupt object as an
// error wrapping ErrNotFound or ErrCorrupt. Objects shared by several paths
// are checked once. Errors name the path involved, never an ID.
func CheckClosure(src Source, commit ID) error {
	o, err := get(src, commit, KindCommit)
	if err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	c, err := DecodeCommit(o)
	if err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	seen := make(map[ID]bool)
	return walkTree(src, c.Tree, seen, func(path string, e TreeEntry) error {
		if e.Kind != KindFile || seen[e.ID] {
			return nil
		}
		seen[e.ID] = true
		if err := checkFile(src, e.ID, seen); err != nil {
			return fmt.Errorf("file %q: %w", path, err)
		}
		return nil
	})
}

// checkFile reads the file object id and every chunk it lists not yet in
// seen. Reading through a Source verifies each object's ID.
func checkFile(src Source, id ID, seen map[ID]bool) error {
	o, err := get(src, id, KindFile)
	if err != nil {
		return err
	}
	f, err := DecodeFile(o)
	if err != nil {
		return err
	}
	for i, ref := range f.Chunks {
		if seen[ref.ID] {
			continue
		}
		if _, err := readChunk(src, i, ref); err != nil {
			return err
		}
		seen[ref.ID] = true
	}
	return nil
}
