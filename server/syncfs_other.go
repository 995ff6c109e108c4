//go:build !linux

package server

import (
	"errors"
	"os"
)

// canSyncFS: elsewhere each file is fsynced as it is written.
const canSyncFS = false

func syncFS(*os.Root) error { return errors.New("server: syncfs is Linux-only") }
