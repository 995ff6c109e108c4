package s3store_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/s3store"
)

// countingTransport fails every request it is given, counting them.
type countingTransport struct{ n atomic.Int32 }

func (c *countingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	c.n.Add(1)
	return nil, errors.New("no request should be sent")
}

// withoutCredentials empties every source the default chain reads: the
// environment, the shared files and the instance metadata endpoint.
func withoutCredentials(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_PROFILE",
		"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI"} {
		t.Setenv(k, "")
	}
	t.Setenv("AWS_CONFIG_FILE", empty)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", empty)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}

// With no credentials anywhere, every operation fails with
// ErrNoCredentials (a refinement of ErrAccessDenied: not retryable, not
// "unreachable"), nothing is sent, and the SDK's error stays the cause.
func TestS3NoCredentials(t *testing.T) {
	withoutCredentials(t)
	ct := &countingTransport{}
	s := openS3(t, s3store.Config{Bucket: "b", Endpoint: "http://127.0.0.1:1", PathStyle: true, Transport: ct})
	for _, op := range []storeOp{opGet, opHead, opList, opCreate, opReplace, opPut, opDelete} {
		err := op.run(context.Background(), s)
		expectOnly(t, op.name, err, remote.ErrAccessDenied)
		if !errors.Is(err, remote.ErrNoCredentials) {
			t.Fatalf("%s: %v is not ErrNoCredentials", op.name, err)
		}
		if errors.Unwrap(err) == nil || err.Error() == remote.ErrNoCredentials.Error() {
			t.Fatalf("%s: the SDK's cause is lost: %v", op.name, err)
		}
	}
	if n := ct.n.Load(); n != 0 {
		t.Fatalf("%d requests sent without credentials", n)
	}
	// A cancelled call is a cancellation, whatever the chain had to give.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := opGet.run(ctx, s); errors.Is(err, remote.ErrNoCredentials) {
		t.Fatalf("a cancelled call reads as missing credentials: %v", err)
	}
}
