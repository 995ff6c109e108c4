//go:build !unix

package main

import "os"

// readRegular reads the file at path, reporting false on any failure (see
// the unix version).
func readRegular(path string) ([]byte, bool) {
	b, err := os.ReadFile(path)
	return b, err == nil
}
