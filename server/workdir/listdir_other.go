//go:build !linux

package workdir

import (
	"errors"
	"os"
)

// listDir appends to out the entries of the open directory d, with an
// lstat of each regular file.
func listDir(d *os.File, out []dirEnt) ([]dirEnt, error) {
	entries, err := d.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	for _, ent := range entries {
		e := dirEnt{name: ent.Name(), typ: ent.Type()}
		if e.typ.IsRegular() {
			info, err := ent.Info()
			if err != nil {
				return nil, err
			}
			e.st = StatOf(info)
		}
		out = append(out, e)
	}
	return out, nil
}

// rawDirs: directories are listed through os.File (see listdir_linux.go).
const rawDirs = false

func fdOf(*os.File) int { return -1 }

func openSubdir(int, string) (int, error) { return -1, errors.ErrUnsupported }

func listFD(int, []dirEnt) ([]dirEnt, error) { return nil, errors.ErrUnsupported }

func closeFD(int) {}
