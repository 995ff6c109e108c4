//go:build !linux

package server

import "os"

// listDir lists the open directory d with an lstat of each regular file.
func listDir(d *os.File) ([]dirEnt, error) {
	entries, err := d.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	out := make([]dirEnt, 0, len(entries))
	for _, ent := range entries {
		e := dirEnt{name: ent.Name(), typ: ent.Type()}
		if e.typ.IsRegular() {
			info, err := ent.Info()
			if err != nil {
				return nil, err
			}
			e.st = statOf(info)
		}
		out = append(out, e)
	}
	return out, nil
}
