//go:build windows

package workdir

// dirSyncErr: Windows cannot flush a directory handle (NTFS journals
// renames).
func dirSyncErr(error) error { return nil }
