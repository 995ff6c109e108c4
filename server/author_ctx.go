package server

import (
	"context"

	"github.com/slivingdoc/slivingdoc/server/author"
)

// WithAuthor returns ctx carrying the author text a commit records
// (already cleaned by server/author: bounded, scrubbed; "" for none).
// Front ends set it per call, since one serve process commits for the
// client it serves, and the CLI for its user (server/author keeps it).
func WithAuthor(ctx context.Context, a string) context.Context { return author.With(ctx, a) }

// AuthorOf returns the author WithAuthor put in ctx, "" when none.
func AuthorOf(ctx context.Context) string { return author.Of(ctx) }
