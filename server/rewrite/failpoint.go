package rewrite

// Failpoints name the instants a crash test kills the process at. They do
// nothing unless the binary is built with -tags failpoints and the
// environment variable SLIVINGDOC_FAILPOINT names the point; then the
// process SIGKILLs itself there (failpoint_on.go), exactly like a power cut
// or kill -9 as far as L and P are concerned.
const (
	// FailAfterRewriteRecord: the rewrite record is durable, the recovery
	// flag naming it not yet written (an earlier flag may still stand).
	FailAfterRewriteRecord = "after-rewrite-record"
	// FailAfterRecoveryFlag: the recovery flag is durable, L not yet touched.
	FailAfterRecoveryFlag = "after-recovery-flag"
	// FailMidRewrite: the first file of L was rewritten, the rest not.
	FailMidRewrite = "mid-rewrite"
	// FailAfterRewrite: L is rewritten, the baseline is not yet recorded.
	FailAfterRewrite = "after-rewrite"
	// FailAfterPublish: the store accepted the publication, L is untouched.
	FailAfterPublish = "after-publish"
	// FailAfterBaseline: the baseline is recorded, the flag not yet cleared.
	FailAfterBaseline = "after-baseline"
)

// InterruptPrefix before a failpoint's name in SLIVINGDOC_FAILPOINT makes
// the process send itself SIGINT at that point and go on, instead of
// dying there (test builds only).
const InterruptPrefix = "interrupt:"

// Failpoints lists every failpoint name, for tests and documentation.
var Failpoints = []string{FailAfterRewriteRecord, FailAfterRecoveryFlag, FailMidRewrite, FailAfterRewrite, FailAfterPublish, FailAfterBaseline}

// testFail lets tests turn a failpoint into an error instead of a kill,
// to exercise the RECOVERY_FAILURE path in one process (SetFailHook).
var testFail func(name string) error

// SetFailHook makes each failpoint return f(name) (nil: none), for tests
// in one process; it is not safe to call while a call runs.
func SetFailHook(f func(name string) error) { testFail = f }

// Failpoint is called at each named instant; it returns the injected test
// error, if any.
func Failpoint(name string) error {
	killAt(name)
	if testFail != nil {
		return testFail(name)
	}
	return nil
}
