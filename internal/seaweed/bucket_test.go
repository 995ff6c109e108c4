package seaweed_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/slivingdoc/slivingdoc/internal/seaweed"
)

// A bucket of NewBucket is deleted, objects and all, when its test ends:
// every bucket takes volumes of its own, and a shared server that kept
// them all refused every write after about a hundred tests (one package
// at -count=20).
func TestNewBucketIsDeletedWhenItsTestEnds(t *testing.T) {
	srv := seaweed.Shared(t)
	ctx := context.Background()
	var bucket string
	t.Run("user", func(t *testing.T) {
		bucket = srv.NewBucket(t)
		if _, err := put(ctx, srv.Client(), bucket, "a/b", "data", nil); err != nil {
			t.Fatal(err)
		}
	})
	_, err := srv.Client().HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &bucket})
	if statusOf(err) != 404 {
		t.Fatalf("bucket %s after its test: %v, want 404", bucket, err)
	}
}
