//go:build !linux

package osfile

import "errors"

// exchange is Linux's renameat2 RENAME_EXCHANGE; elsewhere callers fall
// back to a rename.
func exchange(a, b string) error { return errors.ErrUnsupported }
