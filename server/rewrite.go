package server

import (
	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/merge"
	"github.com/slivingdoc/slivingdoc/server/dirstate"
	"github.com/slivingdoc/slivingdoc/server/plan"
	"github.com/slivingdoc/slivingdoc/server/pstate"
	"github.com/slivingdoc/slivingdoc/server/pull"
	"github.com/slivingdoc/slivingdoc/server/rewrite"
)

// The rewrite of L under the recovery flag and the settling of an
// interrupted one are server/rewrite's; these are the session's names for
// them.

// materialise rewrites L and records next as the baseline; a failure
// once L may have changed becomes RECOVERY_FAILURE (pull.Materialise).
func (s *session) materialise(changes []plan.Change, flag pstate.RecoveryFlag, next *dirstate.Baseline, ifAccepted bool) error {
	return pull.Materialise(s.Call, changes, flag, next, ifAccepted)
}

func (s *session) settleRewrite(flag *pstate.RecoveryFlag, durable bool) (bool, error) {
	return rewrite.Settle(s.Call, flag, durable)
}

func (s *session) nextBaseline(gen uint64, head cas.ID, rFiles map[string]cas.ID, conflicts []merge.Conflict) (*dirstate.Baseline, error) {
	return rewrite.NextBaseline(s.Call, gen, head, rFiles, conflicts)
}

func failpoint(name string) error { return rewrite.Failpoint(name) }

// The failpoints, for the crash tests of the CLI (server/rewrite).
const (
	FailAfterRewriteRecord = rewrite.FailAfterRewriteRecord
	FailAfterRecoveryFlag  = rewrite.FailAfterRecoveryFlag
	FailMidRewrite         = rewrite.FailMidRewrite
	FailAfterRewrite       = rewrite.FailAfterRewrite
	FailAfterPublish       = rewrite.FailAfterPublish
	FailAfterBaseline      = rewrite.FailAfterBaseline
)

// Failpoints lists every failpoint name, for tests and documentation.
var Failpoints = rewrite.Failpoints
