package remote_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
)

// A store after 1,000 commits, with a checkpoint and cleanup each time
// the tail reaches 64 increments, verifies whole: every referenced pack,
// every object, every chain's closure; nothing orphaned is left behind
// at or below the last cutoff.
func TestVerifyHealthyAfterThousandCommits(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 commits")
	}
	// Segments of their own (format 2, and publishers that do not carry
	// them) and carried by the folding publication's pack (format 3).
	for _, carry := range []bool{false, true} {
		t.Run(fmt.Sprint("carried=", carry), func(t *testing.T) { verifyHealthyAfterThousandCommits(t, carry) })
	}
}

func verifyHealthyAfterThousandCommits(t *testing.T, carry bool) {
	ctx := context.Background()
	m := memstore.New()
	w := newTreeWriter(m)
	w.carry = carry
	checkpoints := 0
	for i := range 1000 {
		acc, err := w.commit(ctx, fmt.Sprint("commit ", i), func(f map[string][]byte) {
			p := fmt.Sprintf("notes/%02d.md", i%20)
			f[p] = append(f[p], fmt.Sprintf("entry %d\n", i)...)
			if i%97 == 0 {
				delete(f, fmt.Sprintf("notes/%02d.md", (i+7)%20))
			}
		})
		if err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
		if acc.State.Manifest.ActiveLength() < 64 {
			continue
		}
		res, err := w.nb.Checkpoint(ctx, remote.CheckpointOptions{Retained: 1, MinIncrements: 64})
		if err != nil {
			t.Fatalf("checkpoint after commit %d: %v", i, err)
		}
		checkpoints++
		if _, err := w.nb.Cleanup(ctx, res.Checkpoint.Through); err != nil {
			t.Fatal(err)
		}
	}
	rep := mustVerify(t, m)
	if checkpoints != 15 || rep.Generation != 1000+15 || rep.Chains != 2 {
		t.Fatalf("%d checkpoints, report %+v", checkpoints, rep)
	}
	if len(rep.Orphans) != 0 {
		t.Fatalf("orphans after cleanups: %v", rep.Orphans)
	}
	// Only the active and one retained chain are stored.
	if n := len(packKeys(t, m, "packs/")); n != rep.Packs {
		t.Fatalf("%d packs stored, %d referenced", n, rep.Packs)
	}
	if own := packKeys(t, m, remote.SegmentsPrefix); carry != (len(own) == 0) {
		t.Fatalf("carried=%v, %d segments of their own", carry, len(own))
	}
}
