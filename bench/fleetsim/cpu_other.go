//go:build !unix

package fleetsim

import "time"

// cpuTime is not measured here: Result.CPU stays 0.
func cpuTime() time.Duration { return 0 }

// raiseFileLimit does nothing here; 0 means unknown.
func raiseFileLimit(uint64) uint64 { return 0 }
