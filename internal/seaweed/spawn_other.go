//go:build !linux

package seaweed

import "os/exec"

// startChild starts cmd. Without a parent-death signal, a server of a test
// binary that is killed outright outlives it; Start's Cleanup covers every
// orderly exit.
func startChild(cmd *exec.Cmd) error { return cmd.Start() }

// startBuildChild starts a go command; without a parent-death signal a
// build of a process killed outright runs to its end, and the next build
// removes what it leaves (removeLeftovers).
func startBuildChild(cmd *exec.Cmd) error { return cmd.Start() }
