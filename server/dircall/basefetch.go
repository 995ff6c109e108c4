package dircall

import (
	"fmt"
	"os"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/server/diag"
)

// Base content missing from the cache. The object cache only keeps a
// copy of the merge base's content, which can go (healing, an operator
// clearing P/stores, a full disk); a base object found in no cache is
// fetched again from the store (objcache.Caches.FetchBase). When the
// store holds it nowhere (cleanup under retention dropped it), the local
// edits of that file cannot be told from others' changes: the call is
// refused with BASELINE_LOST and nothing in L changes (the merge runs
// before the rewrite). The baseline is set aside
// (P/dirs/<h>/baseline-unusable), so the directory is in the
// lost-baseline state of Open and the way out that reason
// documents ends it: a pull adopts the directory as one without a record
// (server/plan).

// refetchBase reads base object id after fetching the store's packs that
// may hold it. It returns a BASELINE_LOST refusal when id is base content
// the store no longer holds either, and cas.ErrNotFound when id is not
// base content at all (the caller's own reporting applies).
func (s *Call) refetchBase(id cas.ID) ([]byte, error) {
	if s.Base == nil || s.Src == nil {
		return nil, cas.ErrNotFound
	}
	paths := s.basePathsOf(id)
	if len(paths) == 0 {
		return nil, cas.ErrNotFound
	}
	if s.baseFetched == nil {
		s.baseFetched = map[string]bool{}
	}
	data, found, err := s.Env.Caches.FetchBase(s.Ctx, s.Src, id, s.Base.Generation, s.baseFetched)
	if err != nil {
		return nil, s.Env.PackFailure(err)
	}
	if found {
		return data, nil
	}
	if s.Probing {
		return nil, cas.ErrNotFound // a decision's read (holdsRewrite): no verdict on the baseline
	}
	s.Env.Log.Warn("base content is in no cache and no longer in the store; the baseline is set aside", "path", paths[0])
	// From now on the directory is in the lost-baseline state: a commit
	// is refused the same way, and a pull adopts the directory as one
	// without a record (the documented way out). The baseline is kept
	// beside, for an operator.
	if err := os.Rename(s.State.File("baseline"), s.State.File("baseline-unusable")); err != nil {
		s.Env.Log.Warn("cannot set the unusable baseline aside", "err", err)
	}
	msg := fmt.Sprintf("The base of %s (the version this directory last synchronised, which its local edits are measured against) is no longer in the private cache nor in the store, so its local edits cannot be told from others' changes; nothing was changed. Pull the directory: files equal to the notebook's are adopted, differing ones become conflict blocks keeping both texts.", paths[0])
	return nil, diag.New(diag.CodeEngineFailed, diag.ReasonBaselineLost, msg, cas.ErrNotFound)
}

func (s *Call) basePathsOf(id cas.ID) []string {
	var out []string
	for p, b := range s.BaseFiles() {
		if b == id {
			out = append(out, p)
		}
	}
	return out
}
