package commit

import (
	"fmt"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/dircall"
	"github.com/slivingdoc/slivingdoc/server/objcache"
	"github.com/slivingdoc/slivingdoc/server/rules"
	"github.com/slivingdoc/slivingdoc/server/secrets"
)

// secretMessage is the refusal's text: the lines, never the secret. (A
// name is listed with the credential replaced.)
const secretMessage = "Some files add what looks like a credential (the lines are listed; a name is shown with it replaced by [secret]); " +
	"remove it and commit again, or run with --secrets allow. Nothing was published or changed."

// refuseSecrets refuses a commit whose local changes add a recognised
// credential: INVALID_CONTENT/INVALID_FILES with reason SECRET and the
// line ranges per file, or SECRET_IN_NAME for a new name holding one
// (which files and lines: rules.Secrets), before anything is published or
// changed. A credential in the message is refused with SECRET_IN_MESSAGE
// (files empty). The log names where, never the match.
func refuseSecrets(s *dircall.Call, message string) error {
	if !s.Env.Secrets {
		return nil
	}
	if found := secrets.Scan([]byte(message)); len(found) > 0 {
		for _, f := range found {
			s.Env.Log.Warn("commit refused: the message holds a recognised credential", "rule", f.Rule, "start", f.Start, "end", f.End)
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
	if s.Base == nil {
		return nil
	}
	changes, old := s.BaseDelta(false)
	if len(changes) == 0 {
		return nil
	}
	var local *objcache.Source // A's content, from the local caches only
	found, err := rules.Secrets(rules.Changes{
		Files: changes, Old: old, Virtual: s.Scan.Virtual, Base: s.Base.Tree,
		Load: func(id cas.ID) ([]byte, error) {
			c, err := s.Load(id)
			if err != nil {
				return nil, s.Env.Fail("read changed file", err)
			}
			return c, nil
		},
		Before: func(id cas.ID) []byte {
			if local == nil {
				local = s.Env.Caches.Source(nil)
			}
			if c, ok := s.Env.Recent.Get(id); ok {
				return c
			}
			if c, err := cas.ReadFile(local, id); err == nil {
				return c
			}
			return nil
		},
	}, s.Env.Log)
	if err != nil || len(found) == 0 {
		return err
	}
	de := diag.New(diag.CodeInvalidContent, diag.ReasonInvalidFiles, secretMessage, nil)
	for _, f := range found {
		reason := diag.FileSecret
		if f.InName {
			reason = diag.FileSecretInName
		}
		de.Files = append(de.Files, diag.FileError{Path: f.Path, Reason: reason, Ranges: f.Ranges})
	}
	return de
}
