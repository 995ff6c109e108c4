package remote

// This file is the contract other packages code against while remote is
// being built. The remote owner replaces the bodies (and may move the
// declarations to focused files); the signatures here may grow but must not
// change.

import (
	"context"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
)

// PackRef names one pack in the manifest and how to verify it.
type PackRef struct {
	Key  string
	Sum  cas.ID // BLAKE3-256 of the whole pack
	Size int64
}

// Increment is one accepted publication after the active checkpoint.
type Increment struct {
	Generation  uint64
	Publication string
	Parent      cas.ID
	Head        cas.ID
	Pack        PackRef
}

// Manifest is the decoded `current` object (version 1).
type Manifest struct {
	Generation uint64
	Head       cas.ID
	Increments []Increment
	// Checkpoint and Retained chains are defined by the remote owner.
}

// Packs returns every pack of the active chain in the order a reader
// applies them (checkpoint first, then increments).
func (m *Manifest) Packs() []PackRef { panic("remote: Manifest.Packs not implemented yet") }

// State is an observed `current`: the manifest (nil for the empty notebook
// at generation 0) and the ETag a conditional replace must match ("" when
// `current` is absent).
type State struct {
	Manifest *Manifest
	ETag     string
}

// Generation returns the accepted generation (0 for the empty notebook).
func (s State) Generation() uint64 { panic("remote: State.Generation not implemented yet") }

// Head returns the accepted head commit (zero for the empty notebook).
func (s State) Head() cas.ID { panic("remote: State.Head not implemented yet") }

// Proposal is what one publication attempt wants accepted.
type Proposal struct {
	Pack []byte // a complete pack holding every object the new head needs that the chain lacks
	Head cas.ID // the new head commit; its parent must be the observed head
	Skip bool   // nothing to publish: the observed state is already the result
}

// Accepted is the outcome of a successful publication.
type Accepted struct {
	State       State
	Publication string
	Attempts    int
	Published   bool // false when the final proposal was Skip
}

// Options configure a Notebook.
type Options struct {
	Retries   int           // lost-race retries after the first attempt (default 8)
	FirstWait time.Duration // first backoff ceiling (default 25ms)
	MaxWait   time.Duration // backoff cap (default 2s)
}

// Notebook runs the publication protocol on one store.
type Notebook struct{}

// Open returns the Notebook on store.
func Open(store Store, opts Options) *Notebook { panic("remote: Open not implemented yet") }

// ReadCurrent reads and strictly decodes `current`.
func (n *Notebook) ReadCurrent(ctx context.Context) (State, error) {
	panic("remote: ReadCurrent not implemented yet")
}

// FetchPack downloads a pack and returns it only if its size and BLAKE3
// match ref (else an error wrapping ErrIntegrity).
func (n *Notebook) FetchPack(ctx context.Context, ref PackRef) ([]byte, error) {
	panic("remote: FetchPack not implemented yet")
}

// Publish runs the protocol: it calls build with the latest accepted state
// and a fresh publication ID, uploads the proposal's pack, and replaces
// `current` conditionally. A lost race re-reads `current` and calls build
// again after a jittered backoff; an ambiguous replace is resolved by
// re-reading `current` and looking for the publication ID. It returns
// Accepted only when acceptance is proved; ErrLostRace when retries run
// out; ErrAmbiguous when acceptance could not be decided.
func (n *Notebook) Publish(ctx context.Context, build func(ctx context.Context, observed State, publication string) (Proposal, error)) (Accepted, error) {
	panic("remote: Publish not implemented yet")
}

// S3Config configures the S3 backend.
type S3Config struct {
	Bucket    string
	Prefix    string
	Region    string
	Endpoint  string // custom endpoint; an URL with user info is refused
	PathStyle bool
}

// NewS3 returns the S3 store (default AWS credential chain).
func NewS3(ctx context.Context, cfg S3Config) (Store, error) {
	panic("remote: NewS3 not implemented yet")
}
