package remote_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/slivingdoc/slivingdoc/remote"
)

// A version-4 sweep leaves a store of versions 1–3 alone (its garbage is
// version 3's cleanup's), and refuses to run without a window.
func TestCleanupV4LeavesOlderStoresAlone(t *testing.T) {
	ctx := context.Background()
	for _, fixture := range []string{"v1-store", "v2-store", "v3-store"} {
		t.Run(fixture, func(t *testing.T) {
			mem := loadStore(t, filepath.Join("testdata", fixture))
			before, err := mem.List(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			n := remote.Open(mem, remote.Options{})
			if _, err := n.CleanupV4(ctx, remote.CleanupV4Options{}); err == nil {
				t.Fatal("a sweep without a window ran")
			}
			res, err := n.CleanupV4(ctx, remote.CleanupV4Options{Window: 1})
			if err != nil || len(res.Deleted) != 0 {
				t.Fatalf("sweep: %+v %v", res, err)
			}
			after, _ := mem.List(ctx, "")
			if len(after) != len(before) {
				t.Fatalf("%d objects, then %d", len(before), len(after))
			}
		})
	}
}
