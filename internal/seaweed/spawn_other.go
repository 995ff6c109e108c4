//go:build !linux

package seaweed

import "os/exec"

// startChild starts cmd. Without a parent-death signal, a server of a test
// binary that is killed outright outlives it; Start's Cleanup covers every
// orderly exit.
func startChild(cmd *exec.Cmd) error { return cmd.Start() }
