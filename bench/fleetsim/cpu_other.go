//go:build !unix

package fleetsim

import "time"

// cpuTime is not measured here: Result.CPU stays 0.
func cpuTime() time.Duration { return 0 }
