//go:build !linux

package workdir

import (
	"errors"
	"os"
)

// CanSyncFS: elsewhere each file is fsynced as it is written.
const CanSyncFS = false

func SyncFS(*os.Root) error { return errors.New("server: syncfs is Linux-only") }
