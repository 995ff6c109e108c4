//go:build !unix

package main

import (
	"os"
	"time"
)

// usage returns a finished child's CPU time; RSS is not available here.
func usage(ps *os.ProcessState) (time.Duration, int64) {
	return ps.UserTime() + ps.SystemTime(), 0
}
