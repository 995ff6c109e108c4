package interrupt

import (
	"context"
	"testing"
)

// Arm runs the command's arming function once, from any context derived
// from the one that carries it, and does nothing on a context without one
// (serve's, a test's).
func TestArmOnce(t *testing.T) {
	Arm(context.Background()) // no arming function: nothing happens

	n := 0
	ctx := WithArming(context.Background(), func() { n++ })
	if n != 0 {
		t.Fatal("armed before Arm")
	}
	child, cancel := context.WithCancel(ctx)
	defer cancel()
	Arm(child)
	Arm(ctx)
	Arm(child)
	if n != 1 {
		t.Fatalf("armed %d times, want once", n)
	}
}
