package rules

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/slivingdoc/slivingdoc/server/workdir"
)

// The refusals of a request path. Any other error of Resolve or Open is
// the file system's, returned as it is.
var (
	// ErrBadPath: the path is not 1 to workdir.MaxPathBytes bytes of
	// UTF-8 without U+0000 (before or after it is made absolute).
	ErrBadPath = errors.New("rules: the path is not 1 to 4,096 bytes of UTF-8 without U+0000")
	// ErrOutsideRoot: the path, or where its symlinks lead, is not at or
	// below the workspace root.
	ErrOutsideRoot = errors.New("rules: the path is outside the workspace root")
	// ErrNotDirectory: the path, or a directory on the way, is a file.
	ErrNotDirectory = errors.New("rules: the path is not a directory")
)

// Workspace is the directory tree a request may address.
type Workspace struct {
	Root    string // absolute, clean
	Default string // the directory "" names and relative paths start from; absolute, clean, at or below Root
}

// Resolve resolves a request path ("" = Default; "~/" expanded, see
// ExpandHome; relative paths are taken from Default) and checks that it is
// at or below Root, lexically and through os.Root, so a symlink cannot
// lead outside. A directory that does not exist yet is fine (a pull
// creates it).
func (w Workspace) Resolve(path string) (string, error) {
	abs, err := w.lexical(path)
	if err != nil {
		return "", err
	}
	if err := w.checkThroughRoot(abs); err != nil {
		return "", err
	}
	return abs, nil
}

func (w Workspace) lexical(path string) (string, error) {
	if path == "" {
		return w.Default, nil
	}
	if len(path) > workdir.MaxPathBytes || !utf8.ValidString(path) || strings.ContainsRune(path, 0) {
		return "", ErrBadPath
	}
	path, err := ExpandHome(path)
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(w.Default, path)
	}
	path = filepath.Clean(path)
	if len(path) > workdir.MaxPathBytes {
		return "", ErrBadPath
	}
	if !Within(w.Root, path) {
		return "", ErrOutsideRoot
	}
	return path, nil
}

// checkThroughRoot stats abs through the workspace os.Root. When the root
// refuses it, the real path (symlinks resolved as far as the path exists)
// tells an escape from an ordinary failure.
func (w Workspace) checkThroughRoot(abs string) error {
	root, err := os.OpenRoot(w.Root)
	if err != nil {
		return err
	}
	defer root.Close()
	rel, _ := filepath.Rel(w.Root, abs)
	st, err := root.Stat(rel)
	switch {
	case err == nil && !st.IsDir():
		return ErrNotDirectory
	case err == nil:
		return nil
	case !Within(RealPath(w.Root), RealPath(abs)):
		return ErrOutsideRoot
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case errors.Is(err, syscall.ENOTDIR):
		return ErrNotDirectory
	}
	return err
}

// Open opens the directory abs (as Resolve returned it) through the
// workspace root, creating it when asked; everything an operation does
// inside it goes through the returned root. A failure that is a refusal
// of the path (it leads outside, or is not a directory) is reported as
// that refusal.
func (w Workspace) Open(abs string, create bool) (*os.Root, error) {
	ws, err := os.OpenRoot(w.Root)
	if err != nil {
		return nil, err
	}
	defer ws.Close()
	rel, _ := filepath.Rel(w.Root, abs)
	if create && rel != "." {
		if err := ws.MkdirAll(rel, 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
			if cerr := w.checkThroughRoot(abs); cerr != nil {
				return nil, cerr
			}
			return nil, err
		}
	}
	r, err := ws.OpenRoot(rel)
	if err != nil {
		if cerr := w.checkThroughRoot(abs); cerr != nil {
			return nil, cerr
		}
		return nil, err
	}
	return r, nil
}

// Within reports whether p is root or below it (both absolute and clean).
func Within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !startsWithDotDot(rel) && !filepath.IsAbs(rel))
}

func startsWithDotDot(rel string) bool {
	return len(rel) >= 3 && rel[:2] == ".." && os.IsPathSeparator(rel[2])
}

// RealPath resolves symlinks in the longest existing prefix of p, so a
// path that does not exist yet still compares by where it would be.
func RealPath(p string) string {
	rest := ""
	for cur := p; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}
