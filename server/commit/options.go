package commit

import (
	"context"
	"strings"
	"time"

	"github.com/slivingdoc/slivingdoc/publish"
	"github.com/slivingdoc/slivingdoc/remote"
)

// realClock is publish.Clock on the wall clock, or on Config.Sleep/Now.
type realClock struct {
	sleep func(ctx context.Context, d time.Duration) error
	now   func() time.Time
}

func (c realClock) Now() time.Time { return c.now() }

func (c realClock) Wait(ctx context.Context, d time.Duration) error { return c.sleep(ctx, d) }

func clockOf(sleep func(context.Context, time.Duration) error, now func() time.Time) publish.Clock {
	c := realClock{sleep: sleep, now: now}
	if c.now == nil {
		c.now = time.Now
	}
	if c.sleep == nil {
		c.sleep = remote.Sleep
	}
	return c
}

// Estimates of a store on this machine (Config.CondEstimate and RTT
// left zero): a conditional write of the file store is a lock, a write
// and a rename, well under these; publish's defaults are an object
// store's, and would make a local fleet's waiting writers sleep for
// nothing.
const (
	localCondEstimate = 2 * time.Millisecond
	localRTT          = time.Millisecond
)

// Options is the engine's publish.Options but for the store ID and the
// objects, which are the call's: the clock of sleep and now (nil: the
// wall clock) and the estimates cond and rtt of the store whose
// remote.Store.Identity is storeIdentity (both zero: a store on this
// machine's for the file store, publish's defaults otherwise).
func Options(storeIdentity string, sleep func(context.Context, time.Duration) error, now func() time.Time, cond, rtt time.Duration) publish.Options {
	o := publish.Options{Clock: clockOf(sleep, now), CondEstimate: cond, RTT: rtt}
	// Only the file store: the in-memory one may sit behind a latency
	// model (the fleet simulation), whose estimates are the model's.
	if o.CondEstimate == 0 && o.RTT == 0 && strings.HasPrefix(storeIdentity, "file://") {
		o.CondEstimate, o.RTT = localCondEstimate, localRTT
	}
	return o
}
