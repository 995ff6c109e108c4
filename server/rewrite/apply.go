package rewrite

import (
	"errors"
	"io/fs"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/merge"
	"github.com/slivingdoc/slivingdoc/server/dircall"
	"github.com/slivingdoc/slivingdoc/server/dirstate"
	"github.com/slivingdoc/slivingdoc/server/plan"
	"github.com/slivingdoc/slivingdoc/server/pstate"
	"github.com/slivingdoc/slivingdoc/server/workdir"
)

// The rewrite that carries out a plan's changes to L under the recovery
// flag (the merge of A, L and R and the changes it makes are
// server/dircall's Call.MergeWith and Call.Plan, over server/plan).

// apply rewrites L towards next, after recording what settling needs
// should it be interrupted (record.go): the next baseline, the
// contents only L holds, the rewrite record and the recovery flag. Then
// removals (and the directories they empty), then each new content written
// to a temporary sibling, fsynced and renamed over its target. It returns
// the next baseline as P keeps it, for State.InstallNextBaseline
// (server/dirstate). The stat cache is updated with what was written;
// entries stay untrusted until a later scan.
func apply(s *dircall.Call, changes []plan.Change, flag pstate.RecoveryFlag, next *dirstate.Baseline, baseBefore map[string]cas.ID) (pstate.NextBaseline, error) {
	var none pstate.NextBaseline
	if err := s.State.RecordWhere(); err != nil {
		return none, &notStarted{err}
	}
	saved, err := s.State.SaveNextBaseline(&next.Baseline, next.Prepared)
	if err != nil {
		return none, &notStarted{err}
	}
	if err := keepRewriteContents(s, changes, baseBefore, next.Tree()); err != nil {
		return none, &notStarted{err}
	}
	flag.Stage = "rewrite"
	if flag.Rewrite, err = s.State.SaveRewrite(rewriteRecordFor(changes, s.Scan.Files, baseBefore, saved.Sum)); err != nil {
		return none, &notStarted{err}
	}
	if err := Failpoint(FailAfterRewriteRecord); err != nil {
		return none, &notStarted{err}
	}
	if err := s.State.SetRecovery(flag); err != nil {
		return none, &notStarted{err}
	}
	if err := Failpoint(FailAfterRecoveryFlag); err != nil {
		return none, err
	}
	for _, t := range s.Scan.Temps {
		if err := s.Root.Remove(t); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return none, err
		}
	}
	s.Scan.Temps = nil
	s.Scan.Changed = true
	s.Scan.ByID = nil // rebuilt from the rewritten tree on demand
	for _, c := range changes {
		if !c.Del {
			continue
		}
		if err := workdir.RemoveFile(s.Root, c.Path, c.Was); err != nil {
			return none, err
		}
		delete(s.Scan.Files, c.Path)
		s.Scan.Stats.Delete(c.Path)
		delete(s.Scan.Content, c.Path)
	}
	return saved, writeAll(s, changes)
}

// notStarted wraps a failure that happened before L was touched.
type notStarted struct{ err error }

func (n *notStarted) Error() string { return n.err.Error() }
func (n *notStarted) Unwrap() error { return n.err }

// writeAll writes every non-deleted change (workdir.WriteFiles) and
// records each written file in the scan, as L now holds it.
func writeAll(s *dircall.Call, changes []plan.Change) error {
	var writes []workdir.Write
	var of []int // index in changes of each write
	for i := range changes {
		if c := &changes[i]; !c.Del {
			writes = append(writes, workdir.Write{Path: c.Path, Content: c.Content, Was: c.Was})
			of = append(of, i)
		}
	}
	err := workdir.WriteFiles(s.Root, writes, func(i int, st workdir.Entry) error {
		c := &changes[of[i]]
		st.ID = c.ID
		st.Markers = len(merge.ScanMarkers(c.Content)) > 0
		st.Key = c.Path
		s.Scan.Files[c.Path] = c.ID
		s.Scan.Stats.Set(c.Path, st)
		s.Scan.Content[c.Path] = c.Content
		if i == 0 {
			return Failpoint(FailMidRewrite)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return Failpoint(FailAfterRewrite)
}
