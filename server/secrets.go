package server

import (
	"sort"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/merge"
	"github.com/slivingdoc/slivingdoc/server/secrets"
)

// FileSecret is the INVALID_FILES file reason of a file whose added lines
// hold a recognised credential.
const FileSecret = "SECRET"

// FileSecretInName is the INVALID_FILES file reason of a new file whose
// name, or the name of a directory above it, holds a recognised
// credential. Its path is reported with the credential replaced by
// secrets.Placeholder, the one path of an envelope that is not as it is.
const FileSecretInName = "SECRET_IN_NAME"

// ReasonSecretInMessage is the INVALID_CONTENT reason of a commit whose
// message holds a recognised credential (files is empty: the message is
// not a file).
const ReasonSecretInMessage = "SECRET_IN_MESSAGE"

// secretMessage is the refusal's text: the lines, never the secret.
const secretMessage = "Some files add what looks like a credential (the lines are listed); remove it and commit again, " +
	"or run with --secrets allow. Nothing was published or changed."

// refuseSecrets refuses a commit whose local changes add a recognised
// credential (server/secrets): INVALID_CONTENT/INVALID_FILES with reason
// SECRET and the line ranges per file, before anything is published or
// changed. Only the lines L adds against A are matched, so a file pulled
// with a secret in it can still be edited and committed. The log names
// the file, the rule and the lines, never the match.
func (s *session) refuseSecrets() error {
	if !s.e.secrets || s.base == nil {
		return nil
	}
	changes, old := s.baseDelta(false)
	if len(changes) == 0 {
		return nil
	}
	var local *objectSource // A's content, from the local caches only
	var refused []FileError
	for _, p := range sortedKeys(changes) {
		id := changes[p]
		if id.IsZero() || s.scan.virtual[p] {
			continue // removed, or not L's
		}
		content, err := s.load(id)
		if err != nil {
			return s.e.fail("read changed file", err)
		}
		var before []byte
		if oldID, ok := old[p]; ok && !oldID.IsZero() {
			if local == nil {
				local = s.e.source(nil)
			}
			// Without A's content (a cache lost since the pull), every
			// line counts as added: refusing then is the safe side.
			if c, ok := s.e.recent.get(oldID); ok {
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
		refused = append(refused, FileError{Path: p, Reason: FileSecret, Ranges: secretRanges(found)})
	}
	if len(refused) == 0 {
		return nil
	}
	de := newError(CodeInvalidContent, ReasonInvalidFiles, secretMessage, nil)
	de.Files = refused
	return de
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
