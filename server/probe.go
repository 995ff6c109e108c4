package server

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/pstate"
)

// probeMaxAge is how long a proved verdict is trusted. The probe costs a
// few requests and a disposable key, so it runs once per store per day,
// never per process (DESIGN §10).
const probeMaxAge = 24 * time.Hour

type probeVerdict struct {
	ProvedAt int64 `json:"provedAt"` // Unix seconds
}

func (e *Engine) probeFile() string { return filepath.Join(e.storeDir(), "probe") }

// Probe learns the store's ID (storeid.go), then proves the store's
// guarantees (remote.Probe) unless a fresh verdict is cached in P for
// this store identity. The adapters call it at startup;
// the operations call it too, so a stale verdict is re-proved lazily.
// An incompatible store yields an *Error wrapping remote.ErrIncompatible.
//
// The probe writes. With read-only credentials (the probe's write is
// refused with ACCESS_DENIED) it degrades to a read check — `current` can
// be read — and reading operations (pull, status, log) proceed; a commit
// then fails at its first write with ACCESS_DENIED, nothing published. The
// degraded verdict is held for this process only and never recorded.
func (e *Engine) Probe(ctx context.Context) error {
	e.identify(ctx)
	e.probeMu.Lock()
	defer e.probeMu.Unlock()
	if e.probed {
		return nil
	}
	if data, err := os.ReadFile(e.probeFile()); err == nil {
		var v probeVerdict
		if json.Unmarshal(data, &v) == nil {
			age := time.Since(time.Unix(v.ProvedAt, 0))
			if age >= 0 && age < probeMaxAge {
				e.probed = true
				return nil
			}
		}
	}
	if err := remote.Probe(ctx, e.store); err != nil {
		if errors.Is(err, remote.ErrAccessDenied) && !errors.Is(err, remote.ErrIncompatible) {
			if _, _, rerr := e.store.Get(ctx, remote.CurrentKey); rerr == nil || errors.Is(rerr, remote.ErrNotFound) {
				e.log.Info("the store refuses writes with these credentials; reading only", "err", err)
				e.probed = true
				return nil
			}
		}
		e.log.Warn("store probe failed", "err", err)
		return probeErr(err)
	}
	data, _ := json.Marshal(probeVerdict{ProvedAt: time.Now().Unix()})
	if err := pstate.WriteAtomic(e.probeFile(), data); err != nil {
		// The verdict holds for this process; the next one proves again.
		e.log.Warn("cannot record the probe verdict", "err", err)
	}
	e.probed = true
	return nil
}

// storeTrouble forgets the probe verdict after an unexpected store error,
// so the next call (in any process) proves the store again. Lost races,
// cancellations and absent objects are expected and keep the verdict.
func (e *Engine) storeTrouble(err error) {
	switch {
	case err == nil, errors.Is(err, remote.ErrLostRace), errors.Is(err, remote.ErrPrecondition),
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return
	case errors.Is(err, remote.ErrUnavailable), errors.Is(err, remote.ErrAmbiguous),
		errors.Is(err, remote.ErrIntegrity), errors.Is(err, remote.ErrAccessDenied):
	default:
		return
	}
	e.probeMu.Lock()
	defer e.probeMu.Unlock()
	e.probed = false
	if rmErr := os.Remove(e.probeFile()); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) {
		e.log.Warn("cannot forget the probe verdict", "err", rmErr)
	}
}
