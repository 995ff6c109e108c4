package server

import (
	"github.com/slivingdoc/slivingdoc/server/dirstate"
	"github.com/slivingdoc/slivingdoc/server/pstate"
	"github.com/slivingdoc/slivingdoc/server/rules"
)

// Private state (P). Its files, their formats and their writing are
// package pstate's (its doc comment lists P's layout and what each file
// holds); here is the engine's side of them: where a directory's records
// are (stateDir). The baseline as the engine holds it, and its reading and
// writing through what a long-lived engine remembers, are server/dirstate's.

// storeDir is P/stores/<key> of the store as last identified (server/storeview).
func (e *Engine) storeDir() string { return e.env.Ident.Dir() }

// stateDir is the private state of L = dir, keyed by dir's resolved
// identity (symlinks resolved), so a symlink alias and the real path share
// one baseline and one lock. State recorded under the path as given (before
// identities were resolved) is still found there.
func (e *Engine) stateDir(dir string) string { return e.stateDirOf(dir, rules.RealPath(dir)) }

// stateDirOf is stateDir of dir, whose resolved path is real.
func (e *Engine) stateDirOf(dir, real string) string {
	return pstate.DirPath(e.private, e.env.Store.Identity(), dir, real)
}

// dirStateOf is the private state of L = dir, whose resolved path is real.
func (e *Engine) dirStateOf(dir, real string) dirstate.State {
	return dirstate.State{Dir: pstate.Dir{Path: e.stateDirOf(dir, real), L: real, Store: e.storeKey}, Remember: e.env.Ident.Remember}
}
