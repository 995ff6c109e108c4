package history

import "fmt"

// ArgumentError refuses a request whose arguments name nothing the
// history holds (a generation newer than the notebook, a path that is no
// file there, a line range outside the file). The engine reports Msg as
// an invalid argument.
type ArgumentError struct{ Msg string }

func (e *ArgumentError) Error() string { return e.Msg }

func argument(format string, args ...any) error {
	return &ArgumentError{Msg: fmt.Sprintf(format, args...)}
}

// UnavailableError refuses a generation outside the retained history:
// reported as such, never as an empty history. Msg names the oldest
// generation that can be read.
type UnavailableError struct{ Msg string }

func (e *UnavailableError) Error() string { return e.Msg }

// OpError is a failure of one step of a reading (Op: "read history",
// "read commit", "blame", …), the cause kept.
type OpError struct {
	Op  string
	Err error
}

func (e *OpError) Error() string { return e.Op + ": " + e.Err.Error() }
func (e *OpError) Unwrap() error { return e.Err }

func fail(op string, err error) error { return &OpError{Op: op, Err: err} }
