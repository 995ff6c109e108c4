package bench

// Publication against SeaweedFS (S3 on loopback): requests and wall time of
// one uncontended remote.Notebook.Publish, as a ratio to the floor measured
// in the same run: one GET plus two PUTs (the pack, then the conditional
// replace of the manifest) by a bare SDK client, with the same object sizes.
//
//	go test -run '^$' -bench RemotePublish -benchtime 200x ./bench/
//
// ns/op is the Publish alone; the floor runs between iterations with the
// timer stopped. Metrics: req/publish and req/floor (HTTP requests counted
// on the wire), ms/publish and ms/floor (medians), x-floor (their ratio).

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/seaweed"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/s3store"
)

// countingTransport counts the HTTP requests that reach the wire.
type countingTransport struct {
	base http.RoundTripper
	n    atomic.Int64
}

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.base.RoundTrip(req)
}

// publishNoteSize is the note a small commit changes.
const publishNoteSize = 2 << 10

// buildProposal proposes a real pack: the changed note's chunk and a commit
// on the observed head (the tree is a placeholder; remote checks the
// commit, not its closure).
func buildProposal(_ context.Context, observed remote.State, pub string) (remote.Proposal, error) {
	chunk, err := cas.ChunkObject(bytes.Repeat([]byte(pub[len(pub)-8:]), publishNoteSize/8))
	if err != nil {
		return remote.Proposal{}, err
	}
	commit := cas.EncodeCommit(cas.Commit{Tree: cas.Sum([]byte("tree " + pub)), Parent: observed.Head(),
		Publication: pub, Time: time.Now(), Message: []byte("bench")})
	w := cas.NewPackWriter()
	for _, o := range []cas.Object{chunk, commit} {
		if err := w.Put(o); err != nil {
			return remote.Proposal{}, err
		}
	}
	pack, err := w.Finish()
	return remote.Proposal{Pack: pack, Head: commit.ID}, err
}

func seaweedS3Config(srv *seaweed.Server, transport http.RoundTripper) s3store.Config {
	return s3store.Config{Bucket: srv.Bucket, Prefix: "bench-" + remote.NewUUIDv7(), Region: srv.Region,
		Endpoint: srv.Endpoint, PathStyle: true, AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey,
		Transport: transport}
}

// floorClient is the bare SDK client of the reference, counted like ours.
func floorClient(srv *seaweed.Server, transport http.RoundTripper) *s3.Client {
	return s3.New(s3.Options{
		Region:       srv.Region,
		BaseEndpoint: aws.String(srv.Endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(srv.AccessKey, srv.SecretKey, ""),
		HTTPClient:   &http.Client{Transport: transport},
	})
}

// floorRound is the minimum any publication needs: read the manifest, put
// the pack, replace the manifest on the ETag read. manifest is sized like
// the real one at this generation.
func floorRound(ctx context.Context, c *s3.Client, bucket, prefix string, pack, manifest []byte) error {
	cur := aws.String(prefix + "current")
	got, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: cur})
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, got.Body)
	got.Body.Close()
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: aws.String(prefix + "packs/" + remote.NewUUIDv7()),
		Body: bytes.NewReader(pack)}); err != nil {
		return err
	}
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: cur, Body: bytes.NewReader(manifest), IfMatch: got.ETag})
	return err
}

func BenchmarkRemotePublish(b *testing.B) {
	srv := seaweed.Shared(b)
	ctx := context.Background()

	ours := &countingTransport{base: http.DefaultTransport}
	store, err := s3store.New(ctx, seaweedS3Config(srv, ours))
	if err != nil {
		b.Fatal(err)
	}
	nb := remote.Open(store, remote.Options{})
	// The first publication creates `current`; measure the steady state.
	if _, err := nb.Publish(ctx, buildProposal); err != nil {
		b.Fatal(err)
	}

	floor := &countingTransport{base: http.DefaultTransport}
	fc := floorClient(srv, floor)
	floorPrefix := "bench-floor-" + remote.NewUUIDv7() + "/"
	if _, err := fc.PutObject(ctx, &s3.PutObjectInput{Bucket: &srv.Bucket, Key: aws.String(floorPrefix + "current"),
		Body: strings.NewReader("{}")}); err != nil {
		b.Fatal(err)
	}

	var pubTimes, floorTimes []time.Duration
	var pubReqs, floorReqs int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		before := ours.n.Load()
		start := time.Now()
		acc, err := nb.Publish(ctx, buildProposal)
		pubTimes = append(pubTimes, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		if acc.Attempts != 1 {
			b.Fatalf("uncontended publication took %d attempts", acc.Attempts)
		}
		pubReqs += ours.n.Load() - before

		b.StopTimer()
		manifest, err := remote.EncodeManifest(acc.State.Manifest)
		if err != nil {
			b.Fatal(err)
		}
		pack := make([]byte, acc.State.Manifest.Increments[len(acc.State.Manifest.Increments)-1].Pack.Size)
		before = floor.n.Load()
		start = time.Now()
		if err := floorRound(ctx, fc, srv.Bucket, floorPrefix, pack, manifest); err != nil {
			b.Fatal(err)
		}
		floorTimes = append(floorTimes, time.Since(start))
		floorReqs += floor.n.Load() - before
		b.StartTimer()
	}
	b.StopTimer()
	mp, mf := median(pubTimes), median(floorTimes)
	b.ReportMetric(float64(pubReqs)/float64(b.N), "req/publish")
	b.ReportMetric(float64(floorReqs)/float64(b.N), "req/floor")
	b.ReportMetric(float64(mp.Microseconds())/1000, "ms/publish")
	b.ReportMetric(float64(mf.Microseconds())/1000, "ms/floor")
	b.ReportMetric(float64(mp)/float64(mf), "x-floor")
}

// BenchmarkRemotePublishContended runs W writers, each with its own client,
// publishing on one notebook: requests per accepted publication and
// accepted publications per second under contention on SeaweedFS.
func BenchmarkRemotePublishContended(b *testing.B) {
	const writers = 4
	srv := seaweed.Shared(b)
	ctx := context.Background()
	counter := &countingTransport{base: http.DefaultTransport}
	cfg := seaweedS3Config(srv, counter)
	notebooks := make([]*remote.Notebook, writers)
	for i := range notebooks {
		store, err := s3store.New(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		notebooks[i] = remote.Open(store, remote.Options{})
	}
	if _, err := notebooks[0].Publish(ctx, buildProposal); err != nil {
		b.Fatal(err)
	}
	before := counter.n.Load()
	var attempts atomic.Int64
	var failed atomic.Value
	start := time.Now()
	b.ResetTimer()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			// b.N publications in total, spread over the writers.
			for i := w; i < b.N; i += writers {
				acc, err := notebooks[w].Publish(ctx, buildProposal)
				if err != nil {
					failed.Store(err)
					return
				}
				attempts.Add(int64(acc.Attempts))
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	elapsed := time.Since(start)
	b.ReportMetric(float64(counter.n.Load()-before)/float64(b.N), "req/publish")
	b.ReportMetric(float64(attempts.Load())/float64(b.N), "attempts/publish")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "accepted/s")
}
