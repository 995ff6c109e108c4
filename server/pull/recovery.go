package pull

import (
	"context"
	"errors"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/dircall"
	"github.com/slivingdoc/slivingdoc/server/pstate"
)

// Recovery. Before L is rewritten, P records the next baseline, the
// rewrite record and the recovery flag naming it (pstate.RecoveryFlag,
// pstate.RewriteRecord; settled by server/rewrite); all
// three are cleared once L and the baseline are durable. A call that finds
// the flag settles the record into a baseline first, path by path from
// what L holds, records it, and only then merges: so a second crash, at
// any point, starts again from a recorded baseline that describes L.
// Temporary files the rewrite left are removed.

// RecoveryFailure turns a failure after local mutation began into
// RECOVERY_FAILURE. It first tries to resynchronise from `current` (once,
// in a fresh context: the original may be what failed); the report says
// whether that worked.
func RecoveryFailure(s *dircall.Call, flag pstate.RecoveryFlag, stage string, cause error) *diag.Error {
	s.Env.Log.Error("operation failed after local changes began", "op", flag.Op, "stage", stage, "err", cause)
	flag.Stage = stage
	if old, err := s.State.LoadRecovery(); err == nil && old != nil && flag.Rewrite == "" {
		flag.Rewrite = old.Rewrite // the record still describes L's rewrite
	}
	if err := s.State.SetRecovery(flag); err != nil {
		s.Env.Log.Error("cannot record the recovery flag", "err", err)
	}
	if errors.Is(cause, cas.ErrCorrupt) {
		s.Env.Caches.Heal() // the resynchronisation then fetches fresh copies
	}
	de := diag.New(diag.CodeRecoveryFailure, diag.ReasonRecoveryPending, "", cause)
	de.Recovery = &diag.Recovery{Stage: stage, RemoteAccepted: flag.RemoteAccepted}
	if s.InRecovery {
		return de
	}
	if err := resync(context.WithoutCancel(s.Ctx), s); err != nil {
		s.Env.Log.Error("resynchronisation failed; the next call retries it", "err", err)
		return de
	}
	resynced := diag.New(diag.CodeRecoveryFailure, diag.ReasonResynchronized, "", cause)
	resynced.Recovery = &diag.Recovery{Stage: stage, RemoteAccepted: flag.RemoteAccepted, Resynchronized: true}
	return resynced
}

// resync brings L and the baseline to merge(A, L, current), clearing the
// recovery flag. Conflicts are left as blocks in the files (and reported
// by the caller's next operation through the marker check).
func resync(ctx context.Context, s *dircall.Call) error {
	s.InRecovery = true
	defer func() { s.InRecovery = false }()
	saved := s.Ctx
	s.Ctx = ctx
	defer func() { s.Ctx = saved }()
	s.Stats = s.State.LoadStatCache()
	s.Base = s.Pending.AdoptAccepted(s.Base)
	_, _, err := Run(s, "resync")
	return err
}

// RecoverFirst runs a pending resynchronisation before an operation.
func RecoverFirst(s *dircall.Call) error {
	flag, err := s.State.LoadRecovery()
	if err != nil {
		return s.Env.Fail("load recovery flag", err)
	}
	if flag == nil && !s.Base.HasUnknown() {
		// A path that stopped being ignored may have an unknown base:
		// only a scan tells (plan.AddVirtual).
		if _, err := s.ScanL(); err != nil {
			return err
		}
		if len(s.Scan.Unknown) == 0 {
			return nil
		}
	}
	if flag == nil {
		flag = &pstate.RecoveryFlag{Op: "settle", Stage: "unknown-base", RemoteAccepted: "no"}
	}
	s.Env.Log.Info("resynchronising after an interrupted operation", "op", flag.Op, "stage", flag.Stage)
	s.InRecovery = true
	_, conflicts, err := Run(s, "resync")
	s.InRecovery = false
	if err != nil {
		// Domain errors the caller can act on (bad files, store trouble)
		// pass through; the flag stays and the next call tries again.
		if de := dircall.MapErr(err); de.Code != diag.CodeEngineFailed {
			return de
		}
		de := diag.New(diag.CodeRecoveryFailure, diag.ReasonRecoveryPending, "", err)
		de.Recovery = &diag.Recovery{Stage: flag.Stage, RemoteAccepted: flag.RemoteAccepted}
		return de
	}
	if len(conflicts) > 0 {
		return ConflictError(conflicts)
	}
	return nil
}
