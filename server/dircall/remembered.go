package dircall

import "github.com/slivingdoc/slivingdoc/remote"

// A directory remembers its store, as a git clone remembers its remote
// (server/storeview's remembered.go). A directory whose record cannot
// describe the store's state is adopted as one without a record
// (DropOutlivedRecord), or its commit refused (OutlivedRecord).

// RecordOfAnotherStore reports whether the directory's record was made
// against another store than the one at the URL now (a store deleted and
// started again, or replaced by a copy of another): its baseline then
// describes nothing this store holds.
func (s *Call) RecordOfAnotherStore() bool { return s.Env.Ident.RecordedOther(s.State.L) }

// recordOutlived reports whether the directory's record cannot describe
// the accepted state read, state: made against another store at this URL,
// or newer than the store (a store restored from a backup keeps its ID
// but its generation goes back). Such a record is no record: merging
// against it would take everything written after the backup for a remote
// deletion.
func (s *Call) recordOutlived(state remote.State) bool {
	if s.Base == nil {
		return false
	}
	if s.RecordOfAnotherStore() {
		return true
	}
	gen := state.Generation()
	return s.Base.Generation > gen || (s.Base.Generation == gen && s.Base.Head != state.Head())
}

// DropOutlivedRecord treats the directory as having no usable record when
// recordOutlived(state) (logged): the call then goes on as for a lost
// baseline, which keeps every file of L (Call.Lost). It returns
// whether it did.
func (s *Call) DropOutlivedRecord(state remote.State) bool {
	if !s.recordOutlived(state) {
		return false
	}
	s.Env.Log.Warn("the directory's record is newer than the store or made against another store; treated as no record",
		"recordGeneration", s.Base.Generation, "storeGeneration", state.Generation())
	s.Base, s.Lost = nil, true
	return true
}
