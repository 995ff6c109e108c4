package server

import "github.com/slivingdoc/slivingdoc/server/rewrite"

// The failpoints, for the crash tests of the CLI (server/rewrite).
const (
	FailAfterRewriteRecord = rewrite.FailAfterRewriteRecord
	FailAfterRecoveryFlag  = rewrite.FailAfterRecoveryFlag
	FailMidRewrite         = rewrite.FailMidRewrite
	FailAfterRewrite       = rewrite.FailAfterRewrite
	FailAfterPublish       = rewrite.FailAfterPublish
	FailAfterBaseline      = rewrite.FailAfterBaseline
	// FailInterrupt before a failpoint's name sends SIGINT there instead
	// of dying.
	FailInterrupt = rewrite.InterruptPrefix
)

// Failpoints lists every failpoint name, for tests and documentation.
var Failpoints = rewrite.Failpoints
