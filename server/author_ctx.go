package server

import "context"

// authorKey is the context key of the author a commit is made for.
type authorKey struct{}

// WithAuthor returns ctx carrying the author text a commit records
// (already cleaned by server/author: bounded, scrubbed; "" for none).
// Front ends set it per call, since one serve process commits for the
// client it serves, and the CLI for its user.
func WithAuthor(ctx context.Context, author string) context.Context {
	return context.WithValue(ctx, authorKey{}, author)
}

// AuthorOf returns the author WithAuthor put in ctx, "" when none.
func AuthorOf(ctx context.Context) string {
	s, _ := ctx.Value(authorKey{}).(string)
	return s
}
