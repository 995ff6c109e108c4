package s3store_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/seaweed"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/remotetest"
	"github.com/slivingdoc/slivingdoc/remote/s3store"
)

// seaweedConfig is the S3 configuration of a fresh notebook prefix in the
// server's default bucket. Credentials are static so that the developer's
// own AWS configuration cannot leak in.
func seaweedConfig(srv *seaweed.Server) s3store.Config {
	return s3store.Config{
		Bucket:          srv.Bucket,
		Prefix:          "nb-" + remote.NewUUIDv7(),
		Region:          srv.Region,
		Endpoint:        srv.Endpoint,
		PathStyle:       true,
		AccessKeyID:     srv.AccessKey,
		SecretAccessKey: srv.SecretKey,
	}
}

func openS3(t testing.TB, cfg s3store.Config) remote.Store {
	t.Helper()
	s, err := s3store.New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("NewS3: %v", err)
	}
	return s
}

// seaweedStore opens a fresh notebook prefix on srv; transport, when not
// nil, carries its requests.
func seaweedStore(t testing.TB, srv *seaweed.Server, transport http.RoundTripper) remote.Store {
	t.Helper()
	cfg := seaweedConfig(srv)
	cfg.Transport = transport
	return openS3(t, cfg)
}

func TestS3ContractOnSeaweedFS(t *testing.T) {
	srv := seaweed.Shared(t)
	remotetest.Run(t, func(t *testing.T) remote.Store { return seaweedStore(t, srv, nil) })
}
