package cas

import "fmt"

// Kind is an object's kind tag, the first byte of its canonical encoding.
type Kind uint8

const (
	KindChunk  Kind = 1 // raw bytes of one content-defined chunk
	KindFile   Kind = 2 // one file's content: ordered chunk IDs and size, or inline bytes
	KindTree   Kind = 3 // one directory: entries sorted by name bytes
	KindCommit Kind = 4 // tree, optional parent, publication ID, UTC seconds, message
)

// String returns the kind's lowercase name as used in docs/format.md.
func (k Kind) String() string {
	switch k {
	case KindChunk:
		return "chunk"
	case KindFile:
		return "file"
	case KindTree:
		return "tree"
	case KindCommit:
		return "commit"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// MaxObjectSize bounds the canonical encoding of any object (16 MiB), and
// so what a hostile pack can make a reader allocate for one object. The
// largest real objects stay far below: a tree of 100,000 entries is about
// 5 MiB, the file object of a 1 GiB file about 4.5 MiB.
const MaxObjectSize = 16 << 20

// Object is one object in canonical form. Body is the canonical encoding,
// starting with the kind tag; ID is Sum(Body).
type Object struct {
	ID   ID
	Kind Kind
	Body []byte
}

// Source reads objects by ID; a missing object is ErrNotFound (wrapped).
// Implementations verify every object against its ID before returning it.
type Source interface {
	Get(id ID) (Object, error)
}

// Sink receives objects, for example a PackWriter. Putting the same object
// twice is allowed and stores it once.
type Sink interface {
	Put(obj Object) error
}

// newObject wraps a body this package just encoded (valid by construction).
func newObject(body []byte) Object {
	return Object{ID: Sum(body), Kind: Kind(body[0]), Body: body}
}

// DecodeObject checks that body is the canonical encoding of an object of
// any kind and returns the object with its computed ID. It is the single
// structural gate for untrusted bodies; errors wrap ErrCorrupt.
func DecodeObject(body []byte) (Object, error) {
	if len(body) == 0 {
		return Object{}, corruptf("empty object body")
	}
	if len(body) > MaxObjectSize {
		return Object{}, corruptf("object of %d bytes exceeds the %d-byte limit", len(body), MaxObjectSize)
	}
	o := Object{ID: Sum(body), Kind: Kind(body[0]), Body: body}
	if err := checkBody(o.Kind, body); err != nil {
		return Object{}, err
	}
	return o, nil
}

// checkBody validates body against the rules of kind.
func checkBody(kind Kind, body []byte) error {
	var err error
	switch kind {
	case KindChunk:
		_, err = decodeChunk(body)
	case KindFile:
		_, err = decodeFile(body)
	case KindTree:
		err = checkTree(body)
	case KindCommit:
		_, err = decodeCommit(body)
	default:
		err = corruptf("unknown object kind %d", body[0])
	}
	return err
}

// verify checks that o is self-consistent: its ID is the digest of its
// body and its Kind is the body's tag. Sources call it on every decode.
func (o Object) verify() error {
	if len(o.Body) == 0 || Kind(o.Body[0]) != o.Kind {
		return corruptf("object kind tag does not match")
	}
	if Sum(o.Body) != o.ID {
		return corruptf("object body does not hash to its ID")
	}
	return nil
}

// check is what every Sink here checks before it keeps o: verify, the
// size limit, and the rules of o's kind.
func (o Object) check() error {
	if err := o.verify(); err != nil {
		return err
	}
	if len(o.Body) > MaxObjectSize {
		return corruptf("object of %d bytes exceeds the %d-byte limit", len(o.Body), MaxObjectSize)
	}
	return checkBody(o.Kind, o.Body)
}

// ChunkObject returns the chunk object holding data (1 to MaxChunk bytes).
func ChunkObject(data []byte) (Object, error) {
	if len(data) == 0 || len(data) > MaxChunk {
		return Object{}, fmt.Errorf("%w: chunk of %d bytes (want 1..%d)", ErrInvalidObject, len(data), MaxChunk)
	}
	body := make([]byte, 1+len(data))
	body[0] = byte(KindChunk)
	copy(body[1:], data)
	return newObject(body), nil
}

// DecodeChunk returns the raw bytes of a chunk object (aliasing o.Body).
func DecodeChunk(o Object) ([]byte, error) {
	if o.Kind != KindChunk {
		return nil, corruptf("object is a %v, want a chunk", o.Kind)
	}
	return decodeChunk(o.Body)
}

func decodeChunk(body []byte) ([]byte, error) {
	if len(body) < 2 || len(body) > 1+MaxChunk || Kind(body[0]) != KindChunk {
		return nil, corruptf("chunk body of %d bytes (want 2..%d)", len(body), 1+MaxChunk)
	}
	return body[1:], nil
}
