package osfile

import (
	"io/fs"
	"os"
)

// ReadDirUnsorted lists dir as os.ReadDir does, without sorting: a pack
// cache or a store directory of thousands of files would spend a third
// of its listing sorting names its caller does not need in order.
func ReadDirUnsorted(dir string) ([]fs.DirEntry, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}
