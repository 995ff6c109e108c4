package remote

// This file keeps the part of the contract the S3 helper implements in
// s3.go (NewS3 moves there when it lands). Everything else of the former
// contract lives in focused files: store.go, errors.go, manifest.go,
// notebook.go, publish.go, guarantees.go, mem.go, file.go.

import "context"

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
