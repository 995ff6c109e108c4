// Package interrupt lets a CLI command catch SIGINT and SIGTERM only from
// the moment it starts work that an interrupt should let finish, rather
// than in every process.
//
// Installing the signal handler (os/signal) starts the runtime's signal
// goroutines, one of them locked to a thread, and costs a short process
// three or four threads: about a tenth of the CPU of a no-op pull or
// commit. Most CLI processes never need it. The engine is crash-safe at
// any point (a killed call is settled by the next one), so until a command
// changes the notebook directory L a signal may end it at once, as it ends
// any program that leaves the signal alone. The one step an interrupt
// should not cut is the rewrite of L: with the handler installed, the
// rewrite runs to its end, and the call stops at its next wait on the
// context (the command reports "interrupted", exit 130) or, with nothing
// left to wait for, completes; L is never left half rewritten by a
// person's Ctrl-C.
//
// Data flow: cmd/slivingdoc gives the engine a context that carries an
// arming function (WithArming) and is cancelled by the handler once armed;
// the engine calls Arm(ctx) just before it rewrites L (server/rewrite), and
// a command calls it before a read that may wait (commit -F on a FIFO or a
// terminal). Arm on a context without an arming function (serve, tests) does
// nothing, so the engine's code is the same whoever calls it.
package interrupt

import (
	"context"
	"sync"
)

type armingKey struct{}

// arming is the function a context carries, run once.
type arming struct {
	once sync.Once
	arm  func()
}

// WithArming returns a copy of ctx whose first Arm calls arm (later calls
// and calls on contexts derived from it do nothing more).
func WithArming(ctx context.Context, arm func()) context.Context {
	return context.WithValue(ctx, armingKey{}, &arming{arm: arm})
}

// Arm runs the arming function ctx carries, once; without one it does
// nothing.
func Arm(ctx context.Context) {
	if a, ok := ctx.Value(armingKey{}).(*arming); ok {
		a.once.Do(a.arm)
	}
}
