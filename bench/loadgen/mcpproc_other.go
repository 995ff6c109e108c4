//go:build !linux

package main

import "time"

// procCPU is not measured outside Linux: the serve rows report 0 CPU.
func procCPU(int) time.Duration { return 0 }

// procPeakRSS is not measured outside Linux.
func procPeakRSS(int) int64 { return 0 }
