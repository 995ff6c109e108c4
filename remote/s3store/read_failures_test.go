package s3store_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/seaweed"
	"github.com/slivingdoc/slivingdoc/remote"
)

// status500 answers 500 to every GET whose path contains match, and passes
// everything else to the real server.
type status500 struct {
	next  http.RoundTripper
	match string
}

func (s status500) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet && strings.Contains(req.URL.Path, s.match) {
		return &http.Response{StatusCode: 500, Status: "500 Internal Server Error", Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), Request: req}, nil
	}
	return s.next.RoundTrip(req)
}

// A store answering 500 to reads has published nothing: reading `current`
// or a pack fails as unavailable (STORE_UNREACHABLE), never as an
// undecided publication (ACCEPTANCE_UNKNOWN).
func TestS3ReadFailuresAreNotAmbiguous(t *testing.T) {
	srv := seaweed.Shared(t)
	ctx := context.Background()
	good := seaweedStore(t, srv, nil)
	nb := remote.Open(good, remote.Options{})
	for range 5 {
		if _, err := publishOne(ctx, good); err != nil {
			t.Fatal(err)
		}
	}
	st, _ := nb.ReadCurrent(ctx)
	for _, match := range []string{"/current", "/proposals/"} {
		bad := seaweedStore(t, srv, status500{next: http.DefaultTransport, match: match})
		bnb := remote.Open(bad, remote.Options{})
		var err error
		if match == "/current" {
			_, err = publishOne(ctx, bad)
		} else {
			_, err = bnb.FetchPack(ctx, st.Manifest.Packs()[0])
		}
		if !errors.Is(err, remote.ErrUnavailable) || errors.Is(err, remote.ErrAmbiguous) {
			t.Fatalf("500 to GET %s: %v; want ErrUnavailable only", match, err)
		}
	}
}
