package server

import (
	"fmt"
	"sort"
	"strings"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/merge"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/objcache"
	"github.com/slivingdoc/slivingdoc/server/secrets"
)

// secretMessage is the refusal's text: the lines, never the secret. (A
// name is listed with the credential replaced.)
const secretMessage = "Some files add what looks like a credential (the lines are listed; a name is shown with it replaced by [secret]); " +
	"remove it and commit again, or run with --secrets allow. Nothing was published or changed."

// refuseSecrets refuses a commit whose local changes add a recognised
// credential (server/secrets): INVALID_CONTENT/INVALID_FILES with reason
// SECRET and the line ranges per file, before anything is published or
// changed. Only the lines L adds against A are matched, so a file pulled
// with a secret in it can still be edited and committed. The log names
// the file, the rule and the lines, never the match.
//
// The message and the names of new files and directories are read too: a
// credential there is refused with SECRET_IN_MESSAGE (files empty) or with
// the file reason SECRET_IN_NAME, the path reported with the credential
// replaced (secrets.Redact), never as it is.
func (s *session) refuseSecrets(message string) error {
	if !s.e.secrets {
		return nil
	}
	if found := secrets.Scan([]byte(message)); len(found) > 0 {
		for _, f := range found {
			s.e.log.Warn("commit refused: the message holds a recognised credential", "rule", f.Rule, "start", f.Start, "end", f.End)
		}
		// Where it is, never what: the message's lines.
		de := diag.New(diag.CodeInvalidContent, diag.ReasonSecretInMessage, "", nil)
		if found[0].Start == found[0].End {
			de.Message = fmt.Sprintf("The commit message holds what looks like a credential on line %d; write it without the credential. Nothing was published or changed.", found[0].Start)
		} else {
			de.Message = fmt.Sprintf("The commit message holds what looks like a credential on lines %d-%d; write it without the credential. Nothing was published or changed.", found[0].Start, found[0].End)
		}
		return de
	}
	if s.base == nil {
		return nil
	}
	changes, old := s.baseDelta(false)
	if len(changes) == 0 {
		return nil
	}
	var local *objcache.Source // A's content, from the local caches only
	var refused []diag.FileError
	named := map[string]bool{} // redacted paths already reported
	for _, p := range sortedKeys(changes) {
		id := changes[p]
		if id.IsZero() || s.scan.virtual[p] {
			continue // removed, or not L's
		}
		if oldID, ok := old[p]; !ok || oldID.IsZero() {
			if shown, bad := s.secretInName(p); bad {
				if !named[shown] {
					named[shown] = true
					s.e.log.Warn("commit refused: a new name holds a recognised credential", "path", shown)
					refused = append(refused, diag.FileError{Path: shown, Reason: diag.FileSecretInName, Ranges: []merge.Range{}})
				}
				continue // its content is not read: the refusal already names it
			}
		}
		content, err := s.load(id)
		if err != nil {
			return s.e.fail("read changed file", err)
		}
		var before []byte
		if oldID, ok := old[p]; ok && !oldID.IsZero() {
			if local == nil {
				local = s.e.caches.Source(nil)
			}
			// Without A's content (a cache lost since the pull), every
			// line counts as added: refusing then is the safe side.
			if c, ok := s.e.recent.Get(oldID); ok {
				before = c
			} else if c, err := cas.ReadFile(local, oldID); err == nil {
				before = c
			}
		}
		found := secrets.Added(before, content)
		if len(found) == 0 {
			continue
		}
		for _, f := range found {
			s.e.log.Warn("commit refused: a file adds a recognised credential", "path", p, "rule", f.Rule, "start", f.Start, "end", f.End)
		}
		refused = append(refused, diag.FileError{Path: p, Reason: diag.FileSecret, Ranges: secretRanges(found)})
	}
	if len(refused) == 0 {
		return nil
	}
	de := diag.New(diag.CodeInvalidContent, diag.ReasonInvalidFiles, secretMessage, nil)
	de.Files = refused
	return de
}

// secretInName reports whether the new path p has a recognised credential
// in its file name or in the name of a directory that is new too (one A
// already holds was accepted earlier and does not block this commit), and
// p as it may be shown: each such name with the credential replaced.
func (s *session) secretInName(p string) (shown string, found bool) {
	segs := strings.Split(p, "/")
	var inA map[string]cas.ID // A's files, decoded only when a directory name holds a credential
	for i, seg := range segs {
		red, ok := secrets.Redact(seg)
		if !ok {
			continue
		}
		if i < len(segs)-1 {
			dir := strings.Join(segs[:i+1], "/") + "/"
			if inA == nil {
				inA = s.base.Tree()
			}
			if hasPrefixKey(inA, dir) {
				continue // accepted earlier
			}
		}
		segs[i], found = red, true
	}
	return strings.Join(segs, "/"), found
}

func hasPrefixKey(m map[string]cas.ID, prefix string) bool {
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

// secretRanges orders the findings' lines and merges overlapping or
// adjacent ranges (the envelope's ranges are ordered, non-overlapping).
func secretRanges(found []secrets.Finding) []merge.Range {
	rs := make([]merge.Range, 0, len(found))
	for _, f := range found {
		rs = append(rs, merge.Range{Start: f.Start, End: f.End})
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].Start < rs[j].Start })
	out := rs[:0]
	for _, r := range rs {
		if n := len(out); n > 0 && r.Start <= out[n-1].End+1 {
			out[n-1].End = max(out[n-1].End, r.End)
			continue
		}
		out = append(out, r)
	}
	return out
}
