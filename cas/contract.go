package cas

// This file is the contract other packages code against while cas is being
// built. The cas owner replaces the bodies (and may move the declarations to
// focused files); the signatures here may grow but must not change.

import (
	"errors"
	"time"
)

// Kind is an object's kind tag, the first byte of its canonical encoding.
type Kind uint8

const (
	KindChunk  Kind = 1 // raw bytes of one content-defined chunk
	KindFile   Kind = 2 // one file's content: ordered chunk IDs and size, or inline bytes
	KindTree   Kind = 3 // one directory: entries sorted by name bytes
	KindCommit Kind = 4 // tree, optional parent, publication ID, UTC seconds, message
)

// Object is one object in canonical form. Body is the canonical encoding,
// starting with the kind tag; ID is Sum(Body).
type Object struct {
	ID   ID
	Kind Kind
	Body []byte
}

var (
	// ErrNotFound: the source does not hold the object.
	ErrNotFound = errors.New("cas: object not found")
	// ErrCorrupt: bytes that fail a checksum, an ID check or a decode rule.
	ErrCorrupt = errors.New("cas: corrupt data")
)

// Source reads objects by ID; a missing object is ErrNotFound (wrapped).
type Source interface {
	Get(id ID) (Object, error)
}

// Sink receives objects, for example a PackWriter. Putting the same object
// twice is allowed and stores it once.
type Sink interface {
	Put(obj Object) error
}

// Commit is a decoded commit object.
type Commit struct {
	Tree        ID
	Parent      ID     // zero for the first commit
	Publication string // the publication ID (a UUIDv7 string) of the attempt that made it
	Time        time.Time
	Message     []byte
}

// EncodeCommit returns the canonical commit object (time truncated to UTC seconds).
func EncodeCommit(c Commit) Object { panic("cas: EncodeCommit not implemented yet") }

// DecodeCommit decodes a commit object, refusing any other kind.
func DecodeCommit(o Object) (Commit, error) { panic("cas: DecodeCommit not implemented yet") }

// WriteFile chunks content, puts its chunk objects and its file object into
// sink, and returns the file ID. A nil sink only computes the ID.
func WriteFile(sink Sink, content []byte) (ID, error) { panic("cas: WriteFile not implemented yet") }

// ReadFile returns the content of the file object id.
func ReadFile(src Source, id ID) ([]byte, error) { panic("cas: ReadFile not implemented yet") }

// WriteTree builds the tree objects for a flat map of slash-separated file
// paths to file IDs, puts them into sink (nil: only compute), and returns
// the root tree ID. An empty map yields the ID of the empty tree.
func WriteTree(sink Sink, files map[string]ID) (ID, error) {
	panic("cas: WriteTree not implemented yet")
}

// ReadTree walks the tree root and returns the flat map of file paths to file IDs.
func ReadTree(src Source, root ID) (map[string]ID, error) { panic("cas: ReadTree not implemented yet") }

// CheckClosure walks the commit, its tree, every file and chunk it reaches
// (not its parents) and returns the first missing or corrupt object as an
// error wrapping ErrNotFound or ErrCorrupt.
func CheckClosure(src Source, commit ID) error { panic("cas: CheckClosure not implemented yet") }

// PackWriter accumulates objects for one pack. It is a Sink.
type PackWriter struct{}

func NewPackWriter() *PackWriter              { panic("cas: NewPackWriter not implemented yet") }
func (w *PackWriter) Put(obj Object) error    { panic("cas: PackWriter.Put not implemented yet") }
func (w *PackWriter) Len() int                { panic("cas: PackWriter.Len not implemented yet") }
func (w *PackWriter) Finish() ([]byte, error) { panic("cas: PackWriter.Finish not implemented yet") }

// Pack is a verified, opened pack.
type Pack struct{}

// OpenPack verifies the trailer checksum and the index and returns the pack.
// Every object's ID is verified again when it is decoded by Get.
func OpenPack(data []byte) (*Pack, error) { panic("cas: OpenPack not implemented yet") }
func (p *Pack) Get(id ID) (Object, error) { panic("cas: Pack.Get not implemented yet") }
func (p *Pack) IDs() []ID                 { panic("cas: Pack.IDs not implemented yet") }

// Store is the local pack store: a directory of verified packs, safe for
// concurrent readers in one process and for several processes sharing the
// directory. It is a Source.
type Store struct{}

// OpenStore opens (creating if needed) the pack store in dir.
func OpenStore(dir string) (*Store, error) { panic("cas: OpenStore not implemented yet") }

// AddPack verifies data as a pack and stores it under name (a file name,
// no slashes) atomically: temp file, fsync, rename. Adding a name that is
// already present is a no-op.
func (s *Store) AddPack(name string, data []byte) error {
	panic("cas: Store.AddPack not implemented yet")
}
func (s *Store) HasPack(name string) bool  { panic("cas: Store.HasPack not implemented yet") }
func (s *Store) Get(id ID) (Object, error) { panic("cas: Store.Get not implemented yet") }
func (s *Store) Has(id ID) bool            { panic("cas: Store.Has not implemented yet") }
func (s *Store) Close() error              { panic("cas: Store.Close not implemented yet") }
