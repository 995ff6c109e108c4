package pstate

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/crashpoint"
	"github.com/slivingdoc/slivingdoc/internal/osfile"
)

// PendingRecord is P/dirs/<h>/pending: the publications of this directory
// that the store may have accepted before L and A were updated (L6 of
// docs/local-state.md). It is written before each publication attempt,
// without fsync (losing it only degrades to a conflict of the writer with
// its own lines; a P that cannot write it fails the commit before
// anything is published). The engine decides from `current` what an entry
// means (server/pending).
type PendingRecord struct {
	BaseHead string         `json:"baseHead"` // hex of A's head the overlays apply to
	Entries  []PendingEntry `json:"entries"`
}

// PendingEntry is one publication's overlay: path → hex file ID, "" for a
// path the publication removed.
type PendingEntry struct {
	Publication string            `json:"publication"`
	Overlay     map[string]string `json:"overlay"`
	// Bases holds L's content of each path the publication text-merged
	// with others' changes: that content is the right base for the next
	// merge (M minus it is exactly the others' changes), and it is in no
	// pack, since M's merged content was published instead.
	Bases map[string][]byte `json:"bases,omitempty"`
	// V4 (format version 4): the publication registered proposals, the
	// first built on generation First. A proposal stays foldable after its
	// writer dies, so an entry `current` does not name yet is undecided,
	// not absent: it is kept, and the next commit resumes the publication
	// under its ID (publish.Publisher.Resume).
	V4    bool   `json:"v4,omitempty"`
	First uint64 `json:"first,omitempty"`
	// Last is the generation the newest version was built on (a record
	// without it: First). A version is registered only once the one
	// before it can no longer be folded, so Last alone says whether the
	// call is still undecided.
	Last uint64 `json:"last,omitempty"`

	// Base is the head of the base the overlay applies to, in memory only
	// (never encoded: the record's BaseHead says it on disk).
	Base cas.ID `json:"-"`
}

// LoadPending returns the record (nil: none); ErrCorrupt when it cannot
// be decoded.
func (d Dir) LoadPending() (*PendingRecord, error) {
	data, err := os.ReadFile(d.File("pending"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r PendingRecord
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, ErrCorrupt
	}
	return &r, nil
}

// pendingSpare is the file the pending record is written through and
// removed into: a commit writes the record and removes it again, and
// through a spare it does so without creating or freeing an inode (about
// 150 µs of CPU each on an ext4 disk that frees inodes often). Never read;
// the record, like every record of the directory, is read and written
// only under the directory's lock (osfile.WriteSpare).
const pendingSpare = ".pending.spare"

// SavePending writes the record (not durable: see PendingRecord).
func (d Dir) SavePending(r *PendingRecord) error {
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(d.Path, 0o700); err != nil {
		return err
	}
	return osfile.WriteSpare(d.File("pending"), d.File(pendingSpare), 0o600, false, data)
}

// RemovePending removes the record by renaming it to the spare, which the
// next SavePending writes over.
func (d Dir) RemovePending() error {
	crashpoint.Hit(cpRemoveState, "pending")
	err := os.Rename(d.File("pending"), d.File(pendingSpare))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
