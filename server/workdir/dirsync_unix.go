//go:build unix

package workdir

// dirSyncErr: directory fsync is meaningful and must succeed on unix.
func dirSyncErr(err error) error { return err }
