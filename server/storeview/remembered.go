package storeview

import (
	"net/url"
	"path/filepath"
	"strings"

	"github.com/slivingdoc/slivingdoc/server/pstate"
)

// A directory remembers its store, as a git clone remembers its remote.
// Each pull or commit that records a baseline also records, in
// P/remotes/<hash(L resolved)> (pstate.Remembered), which store the
// directory belongs to: the store's URL identity, its ID (empty while the
// store was not yet named) and the caller's locator (how to open it
// again). A command on the directory that names no store uses that one;
// a call that names another store is refused by the engine before
// anything is read or written, so two notebooks are never mixed in one
// directory. The record is keyed by the directory alone, so it is found
// before the store is known.

// RememberedAbove returns the store recorded under the private root
// private for the resolved directory realDir or for the nearest directory
// above it that has one (a command run in a subdirectory of a notebook),
// and whether there is one.
func RememberedAbove(private, realDir string) (pstate.Remembered, bool) {
	for cur := realDir; ; {
		if r, ok := pstate.ReadRemembered(private, cur); ok {
			return r, true
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return pstate.Remembered{}, false
		}
		cur = parent
	}
}

// Remember records the store for the resolved directory realDir, unless
// that is already what P holds. A failure is logged: the record only
// spares the caller the store settings and guards against a mix-up, and
// its absence is what every directory pulled before it had.
func (i *Identity) Remember(realDir string) {
	if realDir == "" {
		return
	}
	want := pstate.Remembered{Dir: realDir, Identity: i.store.Identity(), StoreID: i.ID(), Locator: i.locator}
	if have, ok := pstate.ReadRemembered(i.private, realDir); ok {
		if have.Identity == want.Identity && have.StoreID == want.StoreID && (have.Locator == want.Locator || want.Locator == "") {
			return
		}
		if want.Locator == "" {
			want.Locator = have.Locator // an embedder without a locator keeps the CLI's
		}
	}
	if err := pstate.WriteRemembered(i.private, want); err != nil {
		i.log.Warn("cannot record the directory's store", "err", err)
	}
}

// RecordedOther reports whether the record of the resolved directory
// realDir was made against another store than the one at the URL now (a
// store deleted and started again, or replaced by a copy of another).
func (i *Identity) RecordedOther(realDir string) bool {
	r, ok := pstate.ReadRemembered(i.private, realDir)
	if !ok || r.Identity != i.store.Identity() || r.StoreID == "" {
		return false // unknown: recorded by an older binary, or before the store was named
	}
	return r.StoreID != i.ID()
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
