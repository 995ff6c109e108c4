package fleetsim

import (
	"context"
	"time"
)

// modelClock is the engines' publication clock in the model's time
// (server.Config.Sleep and Now): with Config.Scale s, a backoff or a
// version-4 wait of d model time sleeps d/s real, and the windows the
// protocol measures (round trips, an attempt's age) read in model time, so
// that slow motion compresses only the engines' CPU, not their waits.
type modelClock struct {
	scale float64
	t0    time.Time
}

func (c modelClock) now() time.Time {
	return c.t0.Add(time.Duration(float64(time.Since(c.t0)) * c.scale))
}

func (c modelClock) sleep(ctx context.Context, d time.Duration) error {
	return sleepFor(ctx, time.Duration(float64(d)/c.scale))
}

// sleepFor waits d of real time, or until ctx ends.
func sleepFor(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
