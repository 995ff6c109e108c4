package server

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/pstate"
	"github.com/slivingdoc/slivingdoc/server/rules"
)

// A directory remembers its store, as a git clone remembers its remote.
// Each pull or commit that records a baseline also records, in
// P/remotes/<hash(L resolved)> (pstate.Remembered), which store the
// directory belongs to: the store's URL identity, its ID
// (remote/storeid.go; empty while the store was not yet named) and the
// caller's locator (Config.StoreLocator: how to open it again). A command
// on the directory that names no store uses that one (the CLI reads the
// record through RememberedStoreOf); a call that names another store is
// refused with STORE_MISMATCH before anything is read or written, so two
// notebooks are never mixed in one directory. The record is keyed by the
// directory alone, so it is found before the store is known.

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
	for cur := rules.RealPath(d); ; {
		if r, ok := pstate.ReadRemembered(priv, cur); ok {
			return r, true
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return pstate.Remembered{}, false
		}
		cur = parent
	}
}

// rememberStore records the engine's store for the resolved directory
// realDir, unless that is already what P holds. A failure is logged: the
// record only spares the caller the store settings and guards against a
// mix-up, and its absence is what every directory pulled before it had.
func (e *Engine) rememberStore(realDir string) {
	if realDir == "" {
		return
	}
	want := pstate.Remembered{Dir: realDir, Identity: e.store.Identity(), StoreID: e.StoreID(), Locator: e.locator}
	if have, ok := pstate.ReadRemembered(e.private, realDir); ok {
		if have.Identity == want.Identity && have.StoreID == want.StoreID && (have.Locator == want.Locator || want.Locator == "") {
			return
		}
		if want.Locator == "" {
			want.Locator = have.Locator // an embedder without a locator keeps the CLI's
		}
	}
	if err := pstate.WriteRemembered(e.private, want); err != nil {
		e.log.Warn("cannot record the directory's store", "err", err)
	}
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
		ShowStore(r.Identity), ShowStore(e.store.Identity())))
}

// ShowStore names a store by its identity for a message: the URL without
// a query (an S3 endpoint is shown as its host), never credentials.
func ShowStore(identity string) string {
	base, query, _ := strings.Cut(identity, "?")
	if q, err := url.ParseQuery(query); err == nil {
		if ep := q.Get("endpoint"); ep != "" {
			if u, err := url.Parse(ep); err == nil && u.Host != "" {
				return base + " at " + u.Host
			}
		}
	}
	return base
}

// recordOfAnotherStore reports whether the directory's record was made
// against another store than the one at the URL now (a store deleted and
// started again, or replaced by a copy of another): its baseline then
// describes nothing this store holds.
func (s *session) recordOfAnotherStore() bool {
	r, ok := pstate.ReadRemembered(s.e.private, s.state.L)
	if !ok || r.Identity != s.e.store.Identity() || r.StoreID == "" {
		return false // unknown: recorded by an older binary, or before the store was named
	}
	return r.StoreID != s.e.StoreID()
}

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

// errRecordNewer: a commit found the store older than the directory's
// record (commit_attempt.go); it ends as outlivedRecord (errmap.go).
var errRecordNewer = errors.New("server: the directory's record is newer than the store")

// outlivedRecord is the refusal of a call on a non-empty directory whose
// record dropOutlivedRecord set aside; nothing was changed.
func outlivedRecord() *diag.Error {
	return diag.New(diag.CodeEngineFailed, diag.ReasonBaselineLost, "The directory's record is newer than the store (the store was restored from an older copy) or was made against another store at the same URL, so local edits cannot be told from others' changes; nothing was changed. Pull the directory: files equal to the notebook's are adopted, differing ones become conflict blocks keeping both texts.", nil)
}
