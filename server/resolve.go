package server

import (
	"errors"
	"github.com/slivingdoc/slivingdoc/server/pstate"
	"github.com/slivingdoc/slivingdoc/server/rules"
	"github.com/slivingdoc/slivingdoc/server/workdir"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"unicode/utf8"
)

// ResolveDir resolves a request path ("" = DefaultDir; "~/" expanded;
// relative paths are taken from DefaultDir) and checks that it is at or
// below the workspace root, lexically and through os.Root, so a symlink
// cannot lead outside. A directory that does not exist yet is fine (pull
// creates it). Errors are *Error.
func (e *Engine) ResolveDir(path string) (string, error) {
	abs, err := e.resolveLexical(path)
	if err != nil {
		return "", err
	}
	if err := e.checkThroughRoot(abs); err != nil {
		return "", err
	}
	return abs, nil
}

func (e *Engine) resolveLexical(path string) (string, error) {
	if path == "" {
		return e.defDir, nil
	}
	if len(path) > workdir.MaxPathBytes || !utf8.ValidString(path) || strings.ContainsRune(path, 0) {
		return "", invalidRequest(ReasonInvalidArgument, "path must be 1 to 4,096 bytes of UTF-8 without U+0000.")
	}
	path, err := rules.ExpandHome(path)
	if err != nil {
		return "", invalidRequest(ReasonInvalidArgument, "path starts with ~/ but the home directory is unknown.")
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(e.defDir, path)
	}
	path = filepath.Clean(path)
	if len(path) > workdir.MaxPathBytes {
		return "", invalidRequest(ReasonInvalidArgument, "path must be 1 to 4,096 bytes of UTF-8 without U+0000.")
	}
	if !within(e.workspace, path) {
		return "", invalidRequest(ReasonPathOutsideRoot, "")
	}
	return path, nil
}

// checkThroughRoot stats abs through the workspace os.Root. When the root
// refuses it, the real path (symlinks resolved as far as the path exists)
// tells an escape from an ordinary failure.
func (e *Engine) checkThroughRoot(abs string) error {
	root, err := os.OpenRoot(e.workspace)
	if err != nil {
		return mapErr(err)
	}
	defer root.Close()
	rel, _ := filepath.Rel(e.workspace, abs)
	st, err := root.Stat(rel)
	switch {
	case err == nil && !st.IsDir():
		return invalidRequest(ReasonPathNotDirectory, "")
	case err == nil:
		return nil
	case !within(realPath(e.workspace), realPath(abs)):
		return invalidRequest(ReasonPathOutsideRoot, "")
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case errors.Is(err, syscall.ENOTDIR):
		return invalidRequest(ReasonPathNotDirectory, "")
	}
	return mapErr(err)
}

// openDir opens L through the workspace root, creating it when asked.
// Everything the operations do inside L goes through the returned root.
func (e *Engine) openDir(abs string, create bool) (*os.Root, error) {
	ws, err := os.OpenRoot(e.workspace)
	if err != nil {
		return nil, mapErr(err)
	}
	defer ws.Close()
	rel, _ := filepath.Rel(e.workspace, abs)
	if create && rel != "." {
		if err := ws.MkdirAll(rel, 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
			if err := e.checkThroughRoot(abs); err != nil {
				return nil, err
			}
			return nil, mapErr(err)
		}
	}
	r, err := ws.OpenRoot(rel)
	if err != nil {
		if cerr := e.checkThroughRoot(abs); cerr != nil {
			return nil, cerr
		}
		return nil, mapErr(err)
	}
	return r, nil
}

// Nested notebook directories. A notebook directory's scan takes in every
// directory below it, so a second notebook directory of the same store
// inside it would hold a second copy of the notebook that the outer one
// then publishes (notes/notes/…). So a request path at or below an existing
// notebook directory (one with a baseline) of this store addresses that
// directory: the operation runs on the enclosing notebook directory, the
// outermost if several, and the result's path names it. A path that would
// become a new notebook directory containing an existing one is refused
// with INVALID_REQUEST / CONTAINS_NOTEBOOK, naming the other directory
// relative to the request.

// notebookDir returns the notebook directory the operation on dir runs on.
func (e *Engine) notebookDir(dir string) (string, error) {
	outer := ""
	for cur := dir; within(e.workspace, cur); cur = filepath.Dir(cur) {
		if _, err := os.Stat(filepath.Join(e.stateDir(cur), "baseline")); err == nil {
			outer = cur
		} else if (pstate.Dir{Path: e.stateDir(cur)}).PulledBefore() {
			outer = cur // pulled, its baseline lost: begin reports that
		}
		if cur == e.workspace || filepath.Dir(cur) == cur {
			break
		}
	}
	if outer != "" {
		return outer, nil
	}
	if inner := e.containedNotebook(dir); inner != "" {
		return "", invalidRequest(ReasonContainsNotebook, "The directory would contain the notebook directory "+inner+" of the same store; use that directory, or one outside it.")
	}
	return dir, nil
}

// NotebookRoot returns the outermost notebook directory of cfg's store
// (one with private state in cfg.PrivateRoot) at or above dir, or dir when
// there is none. The CLI uses it as the workspace root when none is given,
// so `pull nb/sub` runs on the notebook nb instead of starting a copy.
func NotebookRoot(cfg Config, dir string) string {
	if cfg.Store == nil || cfg.PrivateRoot == "" {
		return dir
	}
	priv, err := absClean(cfg.PrivateRoot)
	if err != nil {
		return dir
	}
	e := &Engine{store: cfg.Store, private: priv}
	outer := dir
	for cur := dir; ; cur = filepath.Dir(cur) {
		st := pstate.Dir{Path: e.stateDir(cur)}
		if _, err := os.Stat(st.File("baseline")); err == nil || st.PulledBefore() {
			outer = cur
		}
		if filepath.Dir(cur) == cur {
			return outer
		}
	}
}

// containedNotebook returns an existing notebook directory of this store
// strictly below dir, relative to dir in slash form ("" if none), from the
// "where" records of P.
func (e *Engine) containedNotebook(dir string) string {
	entries, err := os.ReadDir(filepath.Join(e.private, "dirs"))
	if err != nil {
		return ""
	}
	real := realPath(dir)
	var found []string
	for _, ent := range entries {
		w, ok := pstate.Dir{Path: filepath.Join(e.private, "dirs", ent.Name())}.Where()
		if !ok || w.Store != e.storeKey || w.Dir == real || !within(real, w.Dir) {
			continue
		}
		if _, err := os.Stat(w.Dir); err != nil {
			continue // the directory is gone: it no longer holds a copy
		}
		rel, err := filepath.Rel(real, w.Dir)
		if err == nil {
			found = append(found, filepath.ToSlash(rel))
		}
	}
	if len(found) == 0 {
		return ""
	}
	sort.Strings(found)
	return found[0]
}
