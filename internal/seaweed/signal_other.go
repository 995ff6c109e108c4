//go:build !unix

package seaweed

import (
	"errors"
	"os"
)

var errNoSignals = errors.New("seaweed: pausing a process needs unix signals")

func terminate(p *os.Process) error { return p.Kill() }
func pause(*os.Process) error       { return errNoSignals }
func resume(*os.Process) error      { return errNoSignals }

// processAlive is conservative without unix signals: never sweep.
func processAlive(int) bool { return true }
