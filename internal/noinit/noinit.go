// Package noinit holds the forms our packages declare package-level values
// in so that declaring them costs nothing at package initialisation.
//
// A Go program runs every linked package's initialisation before main,
// whatever the command, so a CLI process pays for every package-level value
// built by code: errors.New and fmt.Errorf allocate (fmt.Errorf also runs
// fmt's printer for the first time), and sync.OnceValue allocates its
// closure and state. The types here are laid out by the compiler and linker
// instead:
//
//   - Error is a sentinel error that is its own message. A package-level
//     var ErrX error = noinit.Error("...") is static data: no code runs.
//     Two Errors are equal when their messages are, which is what
//     errors.Is compares; give each sentinel its own message.
//   - Wrapped is a sentinel that is also another (errors.Is matches both),
//     with its whole message written out: &noinit.Wrapped{Msg: "pkg:
//     corrupt data: truncated pack", Base: errCorrupt} where errCorrupt is a
//     constant Error, as fmt.Errorf("%w: truncated pack", ErrCorrupt) would
//     print it.
//   - Lazy holds a value built on first use; its zero value is ready, so a
//     package-level Lazy costs nothing until Get.
//
// The invariant this package serves, that our packages allocate nothing at
// package initialisation, is checked on the built binary by
// cmd/slivingdoc's TestStartupOurPackagesDoNoWorkAtInit.
package noinit

import "sync"

// Error is a sentinel error whose value is its message.
type Error string

func (e Error) Error() string { return string(e) }

// Wrapped is a sentinel error that is also Base: Msg is the whole message,
// Base what errors.Is and errors.As find beneath it.
type Wrapped struct {
	Msg  string
	Base error
}

func (e *Wrapped) Error() string { return e.Msg }

// Unwrap returns Base.
func (e *Wrapped) Unwrap() error { return e.Base }

// Lazy is a value of type T built by the first Get, once, whichever
// goroutines call it; later calls return that value.
type Lazy[T any] struct {
	once sync.Once
	v    T
}

// Get returns the value, calling build to make it on the first call.
// Every call site of one Lazy passes the same build.
func (l *Lazy[T]) Get(build func() T) T {
	l.once.Do(func() { l.v = build() })
	return l.v
}
