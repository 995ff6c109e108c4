//go:build !linux

package workdir

import "os"

// watch: no change watch here; a WatchedListings remembers nothing.
type watch struct{}

func newWatch(*os.Root) (*watch, bool, error) { return nil, false, nil }

func (*watch) close() {}

func (*watch) add(*os.File) (int32, bool) { return 0, false }

func (*watch) drain(func(int32, string)) bool { return false }

func restat(*os.Root, []dirEnt, []string) bool { return false }
