package remote_test

import (
	"context"
	"errors"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

// Issue 14, item 7: a store that fails an upload with a 500 (ambiguous for
// that PUT) has not accepted anything: `current` was never replaced, so
// Publish reports the store unavailable, never an undecidable outcome.
func TestUploadFailureIsNeverAmbiguous(t *testing.T) {
	for _, prefix := range []string{remote.IncrementsPrefix, remote.SegmentsPrefix} {
		t.Run(prefix, func(t *testing.T) {
			ctx := context.Background()
			m := memstore.New()
			nb := remote.Open(m, remote.Options{})
			var p proposer
			// Enough publications that the next one folds the tail into a
			// segment.
			for range remote.MaxTail {
				if _, err := nb.Publish(ctx, p.build); err != nil {
					t.Fatal(err)
				}
			}
			before, _ := nb.ReadCurrent(ctx)
			m.Inject(memstore.Fault{Op: memstore.OpPut, KeyPrefix: prefix, Before: remote.ErrAmbiguous})
			_, err := nb.Publish(ctx, p.build)
			if !errors.Is(err, remote.ErrUnavailable) || errors.Is(err, remote.ErrAmbiguous) {
				t.Fatalf("a failed upload: %v; want ErrUnavailable and not ErrAmbiguous", err)
			}
			memstore.AssertFaultsFired(t, m)
			after, _ := nb.ReadCurrent(ctx)
			if after.Generation() != before.Generation() {
				t.Fatal("a failed upload changed current")
			}
		})
	}
}
