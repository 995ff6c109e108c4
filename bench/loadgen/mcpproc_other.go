//go:build !linux

package main

import "time"

// cpuClock is not read outside Linux: the serve rows report 0 CPU.
type cpuClock struct{}

func newCPUClock(int) *cpuClock { return &cpuClock{} }

func (*cpuClock) read() time.Duration { return 0 }

func (*cpuClock) close() {}

// procPeakRSS is not measured outside Linux.
func procPeakRSS(int) int64 { return 0 }
