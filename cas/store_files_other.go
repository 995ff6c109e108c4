//go:build !unix

package cas

// openFileLimit: no per-process limit to respect here (no handle is kept on
// Windows).
func openFileLimit() uint64 { return 1 << 20 }
