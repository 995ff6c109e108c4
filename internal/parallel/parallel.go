// Package parallel is the one bounded worker pool of slivingdoc, on
// errgroup.SetLimit: the pack downloads of server's cache and of remote's
// catch-up, the segment reads of a history listing, the parallel
// reads of a scan, the file writes of a rewrite and cas's pack
// verification all run through For instead of each keeping its own
// semaphore, counter and WaitGroup.
package parallel

import (
	"sync/atomic"

	"golang.org/x/sync/errgroup"
)

// For calls fn(i) for every i in [0, n), at most limit calls at a time (at
// least one), and returns the first error a call returned, once every
// started call has ended. After a call has failed no further call starts;
// a caller that needs every call made (to keep what the others fetched,
// say) records each error itself and returns nil from fn.
func For(n, limit int, fn func(i int) error) error {
	var g errgroup.Group
	g.SetLimit(max(1, min(limit, n)))
	var failed atomic.Bool
	for i := range n {
		if failed.Load() {
			break
		}
		g.Go(func() error {
			err := fn(i)
			if err != nil {
				failed.Store(true)
			}
			return err
		})
	}
	return g.Wait()
}
