package author

import "context"

// ctxKey is the context key of the author a commit is made for.
type ctxKey struct{}

// With returns ctx carrying the author text a commit records (already
// cleaned by Clean: bounded, scrubbed; "" for none). Front ends set it
// per call, since one serve process commits for the client it serves,
// and the CLI for its user.
func With(ctx context.Context, author string) context.Context {
	return context.WithValue(ctx, ctxKey{}, author)
}

// Of returns the author With put in ctx, "" when none.
func Of(ctx context.Context) string {
	s, _ := ctx.Value(ctxKey{}).(string)
	return s
}
