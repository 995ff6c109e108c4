package server

import (
	"os"
	"path/filepath"

	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/dircall"
	"github.com/slivingdoc/slivingdoc/server/pstate"
	"github.com/slivingdoc/slivingdoc/server/rules"
)

// ResolveDir resolves a request path ("" = DefaultDir; "~/" expanded;
// relative paths are taken from DefaultDir) and checks that it is at or
// below the workspace root, lexically and through os.Root, so a symlink
// cannot lead outside (rules.Workspace). A directory that does not exist
// yet is fine (pull creates it). Errors are *diag.Error.
func (e *Engine) ResolveDir(path string) (string, error) {
	abs, err := e.env.Workspace.Resolve(path)
	if err != nil {
		return "", dircall.PathErr(err)
	}
	return abs, nil
}

// Nested notebook directories (the rules are package rules'
// Outermost and Contained): a request path at or below an existing
// notebook directory of this store addresses that directory, and the
// result's path names it; a path that would become a new notebook
// directory containing an existing one is refused with INVALID_REQUEST /
// CONTAINS_NOTEBOOK, naming the other directory relative to the request.

// notebookDir returns the notebook directory the operation on dir runs on.
func (e *Engine) notebookDir(dir string) (string, error) {
	if outer := rules.Outermost(dir, e.env.Workspace.Root, e.notebookTest(dir)); outer != "" {
		return outer, nil
	}
	if inner := rules.Contained(dir, e.notebooks()); inner != "" {
		return "", diag.InvalidRequest(diag.ReasonContainsNotebook, "The directory would contain the notebook directory "+inner+" of the same store; use that directory, or one outside it.")
	}
	return dir, nil
}

// isNotebook reports whether dir is a notebook directory of e's store:
// it has a baseline, or was pulled before (its baseline lost: begin
// reports that).
func (e *Engine) isNotebook(dir string) bool { return e.isNotebookOf(dir, rules.RealPath(dir)) }

// isNotebookOf is isNotebook of dir, whose resolved path is real.
func (e *Engine) isNotebookOf(dir, real string) bool {
	st := pstate.Dir{Path: e.stateDirOf(dir, real)}
	if _, err := os.Stat(st.File("baseline")); err == nil {
		return true
	}
	return st.PulledBefore()
}

// notebookTest is isNotebook for dir and its ancestors, as Outermost asks
// it. When dir's resolved path is dir itself, no component of it is a
// symbolic link, so neither is any component of an ancestor, and every
// ancestor is its own resolved path: the test then resolves nothing again
// (one lstat per component of dir, where resolving each ancestor costs
// one per component of every ancestor, 28 for a directory 7 deep).
func (e *Engine) notebookTest(dir string) func(string) bool {
	if rules.RealPath(dir) != filepath.Clean(dir) {
		return e.isNotebook
	}
	return func(cur string) bool { return e.isNotebookOf(cur, cur) }
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
	e := &Engine{env: &dircall.Env{Store: cfg.Store}, private: priv}
	if outer := rules.Outermost(dir, "", e.notebookTest(dir)); outer != "" {
		return outer
	}
	return dir
}

// notebooks returns the real paths of this store's notebook directories,
// from the "where" records of P.
func (e *Engine) notebooks() []string {
	entries, err := os.ReadDir(filepath.Join(e.private, "dirs"))
	if err != nil {
		return nil
	}
	var dirs []string
	for _, ent := range entries {
		w, ok := pstate.Dir{Path: filepath.Join(e.private, "dirs", ent.Name())}.Where()
		if ok && w.Store == e.storeKey {
			dirs = append(dirs, w.Dir)
		}
	}
	return dirs
}
