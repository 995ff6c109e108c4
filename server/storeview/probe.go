package storeview

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"sync"
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

// Verdict is an engine's verdict on its store's guarantees: proved (by a
// fresh record in P, by the probe, or degraded to reading only) or not
// yet. The zero value is not yet proved. Its record is the file the
// engine names (P/stores/<key>/probe), asked for under the verdict's lock
// each time, since the engine re-keys it when the store turns out to be
// another.
type Verdict struct {
	mu     sync.Mutex
	proved bool
}

// Prove proves the store's guarantees (remote.Probe) unless this verdict
// holds or a fresh one is recorded in file(). The error is remote.Probe's
// (plain: the engine maps it).
//
// The probe writes. With read-only credentials (the probe's write is
// refused with ACCESS_DENIED) it degrades to a read check — `current` can
// be read — and the verdict holds; a commit then fails at its first write
// with ACCESS_DENIED, nothing published. The degraded verdict is held for
// this process only and never recorded.
func (v *Verdict) Prove(ctx context.Context, store remote.Store, file func() string, log *slog.Logger) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.proved {
		return nil
	}
	if data, err := os.ReadFile(file()); err == nil {
		var pv probeVerdict
		if json.Unmarshal(data, &pv) == nil {
			age := time.Since(time.Unix(pv.ProvedAt, 0))
			if age >= 0 && age < probeMaxAge {
				v.proved = true
				return nil
			}
		}
	}
	if err := remote.Probe(ctx, store); err != nil {
		if errors.Is(err, remote.ErrAccessDenied) && !errors.Is(err, remote.ErrIncompatible) {
			if _, _, rerr := store.Get(ctx, remote.CurrentKey); rerr == nil || errors.Is(rerr, remote.ErrNotFound) {
				log.Info("the store refuses writes with these credentials; reading only", "err", err)
				v.proved = true
				return nil
			}
		}
		log.Warn("store probe failed", "err", err)
		return err
	}
	data, _ := json.Marshal(probeVerdict{ProvedAt: time.Now().Unix()})
	if err := pstate.WriteAtomic(file(), data); err != nil {
		// The verdict holds for this process; the next one proves again.
		log.Warn("cannot record the probe verdict", "err", err)
	}
	v.proved = true
	return nil
}

// Forget makes the next Prove read the record or prove again: the engine
// now speaks to another store identity.
func (v *Verdict) Forget() {
	v.mu.Lock()
	v.proved = false
	v.mu.Unlock()
}

// Trouble forgets the verdict and its record file() after an unexpected
// store error, so the next call (in any process) proves the store again.
// Lost races, cancellations and absent objects are expected and keep the
// verdict.
func (v *Verdict) Trouble(err error, file func() string, log *slog.Logger) {
	switch {
	case err == nil, errors.Is(err, remote.ErrLostRace), errors.Is(err, remote.ErrPrecondition),
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return
	case errors.Is(err, remote.ErrUnavailable), errors.Is(err, remote.ErrAmbiguous),
		errors.Is(err, remote.ErrIntegrity), errors.Is(err, remote.ErrAccessDenied):
	default:
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.proved = false
	if rmErr := os.Remove(file()); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) {
		log.Warn("cannot forget the probe verdict", "err", rmErr)
	}
}
