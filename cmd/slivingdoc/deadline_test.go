package main

import (
	"testing"
	"time"
)

// nearTestDeadline fires shortly before the test binary's -timeout would
// end the run, or never without one. Waits for a child process use it
// instead of a fixed bound: their verdict must not depend on how loaded the
// machine is, yet a hang should still fail with the child's stderr rather
// than only the runtime's goroutine dump.
func nearTestDeadline(t testing.TB) <-chan time.Time {
	d, ok := t.(interface{ Deadline() (time.Time, bool) })
	if !ok {
		return nil
	}
	deadline, has := d.Deadline()
	if !has {
		return nil // a nil channel never fires
	}
	// Leave time for the report and the other cleanups.
	return time.After(time.Until(deadline) - 20*time.Second)
}
