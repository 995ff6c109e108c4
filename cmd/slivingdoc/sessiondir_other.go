//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly

package main

import "errors"

// Without /proc or ps the host is not identified: each server process
// makes its own session directory (sessiondir.go).
func readProc(int) (hostProc, error) { return hostProc{}, errors.ErrUnsupported }

func bootID() string { return "" }
