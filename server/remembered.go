package server

import (
	"fmt"

	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/pstate"
	"github.com/slivingdoc/slivingdoc/server/rules"
	"github.com/slivingdoc/slivingdoc/server/storeview"
)

// A directory remembers its store, as a git clone remembers its remote
// (server/storeview's remembered.go: the record and its reading). Here is
// what needs the engine: the CLI reads the record through
// RememberedStoreOf; a call that names another store is refused with
// STORE_MISMATCH before anything is read or written (checkStoreOf). A
// directory whose record cannot describe the store's state is
// server/dircall's (Call.DropOutlivedRecord, OutlivedRecord).

// RememberedStoreOf returns the store recorded under privateRoot for dir
// or for the nearest directory above it that has one (a command run in a
// subdirectory of a notebook), and whether there is one.
func RememberedStoreOf(privateRoot, dir string) (pstate.Remembered, bool) {
	priv, err := absClean(privateRoot)
	if err != nil {
		return pstate.Remembered{}, false
	}
	d, err := absClean(dir)
	if err != nil {
		return pstate.Remembered{}, false
	}
	return storeview.RememberedAbove(priv, rules.RealPath(d))
}

// checkStoreOf refuses a call on directory dir when dir, or the nearest
// directory above it that remembers a store, belongs to another store
// than the engine's (a notebook of one store inside another's would be
// published as part of it): INVALID_REQUEST / STORE_MISMATCH.
func (e *Engine) checkStoreOf(dir string) error {
	r, ok := RememberedStoreOf(e.private, dir)
	if !ok || r.Identity == e.env.Store.Identity() {
		return nil
	}
	return diag.InvalidRequest(diag.ReasonStoreMismatch, fmt.Sprintf(
		"The directory is (or lies in) a notebook directory of the store %s; this call names the store %s. Nothing was changed. Run the command without store settings to use the directory's store, give that store, or use a directory outside it.",
		storeview.ShowStore(r.Identity), storeview.ShowStore(e.env.Store.Identity())))
}
