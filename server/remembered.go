package server

import (
	"fmt"

	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/pstate"
	"github.com/slivingdoc/slivingdoc/server/rules"
	"github.com/slivingdoc/slivingdoc/server/storeview"
)

// A directory remembers its store, as a git clone remembers its remote
// (server/storeview's remembered.go: the record and its reading). Here is
// what needs the engine or the session: the CLI reads the record through
// RememberedStoreOf; a call that names another store is refused with
// STORE_MISMATCH before anything is read or written (checkStoreOf); a
// directory whose record cannot describe the store's state is adopted
// as one without a record (dropOutlivedRecord), or its commit refused
// (outlivedRecord).

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
	if !ok || r.Identity == e.store.Identity() {
		return nil
	}
	return diag.InvalidRequest(diag.ReasonStoreMismatch, fmt.Sprintf(
		"The directory is (or lies in) a notebook directory of the store %s; this call names the store %s. Nothing was changed. Run the command without store settings to use the directory's store, give that store, or use a directory outside it.",
		storeview.ShowStore(r.Identity), storeview.ShowStore(e.store.Identity())))
}

// recordOfAnotherStore reports whether the directory's record was made
// against another store than the one at the URL now (a store deleted and
// started again, or replaced by a copy of another): its baseline then
// describes nothing this store holds.
func (s *session) recordOfAnotherStore() bool { return s.e.ident.RecordedOther(s.state.L) }

// recordOutlived reports whether the directory's record cannot describe
// the accepted state read, state: made against another store at this URL,
// or newer than the store (a store restored from a backup keeps its ID
// but its generation goes back). Such a record is no record: merging
// against it would take everything written after the backup for a remote
// deletion.
func (s *session) recordOutlived(state remote.State) bool {
	if s.base == nil {
		return false
	}
	if s.recordOfAnotherStore() {
		return true
	}
	gen := state.Generation()
	return s.base.Generation > gen || (s.base.Generation == gen && s.base.Head != state.Head())
}

// dropOutlivedRecord treats the directory as having no usable record when
// recordOutlived(state) (logged): the call then goes on as for a lost
// baseline, which keeps every file of L (session.go: lost). It returns
// whether it did.
func (s *session) dropOutlivedRecord(state remote.State) bool {
	if !s.recordOutlived(state) {
		return false
	}
	s.e.log.Warn("the directory's record is newer than the store or made against another store; treated as no record",
		"recordGeneration", s.base.Generation, "storeGeneration", state.Generation())
	s.base, s.lost = nil, true
	return true
}
