package seaweed_test

// The design rests on the server enforcing If-None-Match: * and If-Match on
// PutObject atomically. These tests are the evidence, with a bare SDK client
// so that no code of ours can mask a server that ignores the headers.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/slivingdoc/slivingdoc/internal/seaweed"
)

func statusOf(err error) int {
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

func put(ctx context.Context, c *s3.Client, bucket, key, body string, edit func(*s3.PutObjectInput)) (string, error) {
	in := &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: strings.NewReader(body)}
	if edit != nil {
		edit(in)
	}
	out, err := c.PutObject(ctx, in)
	if err != nil {
		return "", err
	}
	return aws.ToString(out.ETag), nil
}

func get(ctx context.Context, t *testing.T, c *s3.Client, bucket, key string) string {
	t.Helper()
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatalf("read %s: %v", key, err)
	}
	return string(data)
}

func TestServerEnforcesIfNoneMatchOnPut(t *testing.T) {
	srv := seaweed.Shared(t)
	c, bucket := srv.Client(), srv.NewBucket(t)
	ctx := context.Background()
	create := func(in *s3.PutObjectInput) { in.IfNoneMatch = aws.String("*") }

	if _, err := put(ctx, c, bucket, "k", "first", create); err != nil {
		t.Fatalf("create on an absent key: %v", err)
	}
	_, err := put(ctx, c, bucket, "k", "second", create)
	if statusOf(err) != 412 {
		t.Fatalf("create on an existing key: got %v (status %d), want 412", err, statusOf(err))
	}
	if got := get(ctx, t, c, bucket, "k"); got != "first" {
		t.Fatalf("refused create changed the object: %q", got)
	}
}

func TestServerEnforcesIfMatchOnPut(t *testing.T) {
	srv := seaweed.Shared(t)
	c, bucket := srv.Client(), srv.NewBucket(t)
	ctx := context.Background()
	etag1, err := put(ctx, c, bucket, "k", "v1", nil)
	if err != nil {
		t.Fatal(err)
	}
	etag2, err := put(ctx, c, bucket, "k", "v2", func(in *s3.PutObjectInput) { in.IfMatch = &etag1 })
	if err != nil {
		t.Fatalf("replace with the current ETag: %v", err)
	}
	if etag2 == etag1 || etag2 == "" {
		t.Fatalf("replace returned ETag %q after %q", etag2, etag1)
	}
	_, err = put(ctx, c, bucket, "k", "v3", func(in *s3.PutObjectInput) { in.IfMatch = &etag1 })
	if statusOf(err) != 412 {
		t.Fatalf("replace with a stale ETag: got %v (status %d), want 412", err, statusOf(err))
	}
	_, err = put(ctx, c, bucket, "absent", "v", func(in *s3.PutObjectInput) { in.IfMatch = &etag1 })
	if s := statusOf(err); s != 412 && s != 404 {
		t.Fatalf("replace of an absent key: got %v (status %d), want 412 or 404", err, s)
	}
	if got := get(ctx, t, c, bucket, "k"); got != "v2" {
		t.Fatalf("object is %q, want v2", got)
	}
}

// Many writers holding the same ETag, released together: the server must let
// exactly one replace through.
func TestServerIfMatchRaceHasOneWinner(t *testing.T) {
	srv := seaweed.Shared(t)
	c, bucket := srv.Client(), srv.NewBucket(t)
	ctx := context.Background()
	for round := range 3 {
		key := fmt.Sprintf("race-%d", round)
		etag, err := put(ctx, c, bucket, key, "base", nil)
		if err != nil {
			t.Fatal(err)
		}
		const writers = 8
		start := make(chan struct{})
		var wg sync.WaitGroup
		var mu sync.Mutex
		var winners []string
		var others []error
		for w := range writers {
			wg.Go(func() {
				<-start
				body := fmt.Sprintf("writer-%d", w)
				_, err := put(ctx, c, bucket, key, body, func(in *s3.PutObjectInput) { in.IfMatch = &etag })
				mu.Lock()
				defer mu.Unlock()
				if err == nil {
					winners = append(winners, body)
				} else if statusOf(err) != 412 {
					others = append(others, err)
				}
			})
		}
		close(start)
		wg.Wait()
		if len(others) > 0 {
			t.Fatalf("round %d: losers must get 412, got %v", round, others)
		}
		if len(winners) != 1 {
			t.Fatalf("round %d: %d writers won the same ETag: %v", round, len(winners), winners)
		}
		if got := get(ctx, t, c, bucket, key); got != winners[0] {
			t.Fatalf("round %d: object is %q, winner wrote %q", round, got, winners[0])
		}
	}
}

func TestServerIfNoneMatchRaceHasOneWinner(t *testing.T) {
	srv := seaweed.Shared(t)
	c, bucket := srv.Client(), srv.NewBucket(t)
	ctx := context.Background()
	const writers = 12
	start := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins, lost := 0, 0
	for w := range writers {
		wg.Go(func() {
			<-start
			_, err := put(ctx, c, bucket, "once", fmt.Sprint(w), func(in *s3.PutObjectInput) { in.IfNoneMatch = aws.String("*") })
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case statusOf(err) == 412:
				lost++
			default:
				t.Errorf("create: %v", err)
			}
		})
	}
	close(start)
	wg.Wait()
	if wins != 1 || lost != writers-1 {
		t.Fatalf("%d creates won, %d lost; want 1 and %d", wins, lost, writers-1)
	}
}

func TestReadOnlyIdentityIsDenied(t *testing.T) {
	srv := seaweed.Shared(t)
	ctx := context.Background()
	_, err := put(ctx, srv.ReadOnlyClient(), srv.Bucket, "denied", "x", nil)
	var ae smithy.APIError
	if statusOf(err) != 403 || !errors.As(err, &ae) {
		t.Fatalf("write by the read-only identity: got %v, want 403", err)
	}
}

// Data survives a crash, and a paused server times requests out after they
// were sent: the fault campaign relies on both.
func TestKillRestartPauseResume(t *testing.T) {
	srv := seaweed.Start(t)
	c := srv.Client()
	ctx := context.Background()
	if _, err := put(ctx, c, srv.Bucket, "kept", "before crash", nil); err != nil {
		t.Fatal(err)
	}
	srv.Kill(t)
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	_, err := put(short, c, srv.Bucket, "down", "x", nil)
	cancel()
	if err == nil {
		t.Fatal("put succeeded on a killed server")
	}
	srv.Restart(t)
	if got := get(ctx, t, c, srv.Bucket, "kept"); got != "before crash" {
		t.Fatalf("after restart: %q", got)
	}

	srv.Pause(t)
	short, cancel = context.WithTimeout(ctx, time.Second)
	_, err = put(short, c, srv.Bucket, "paused", "x", nil)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("put on a paused server: got %v, want a deadline error", err)
	}
	srv.Resume(t)
	if _, err := put(ctx, c, srv.Bucket, "resumed", "x", nil); err != nil {
		t.Fatalf("put after resume: %v", err)
	}
}
