package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"path/filepath"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/slivingdoc/slivingdoc/bench"
	"github.com/slivingdoc/slivingdoc/internal/seaweed"
)

// RequestsResult is what each CLI operation sends to SeaweedFS, counted by
// the proxy: requests and bytes per operation class.
type RequestsResult struct {
	Files int
	Ops   []RequestOp
}

// RequestOp is one process run through the proxy.
type RequestOp struct {
	Op       string
	Wall     time.Duration
	Requests int
	Counts   []OpCount
	// S3DollarsPerMillion is what a million of this operation's requests
	// would cost at S3 Standard request prices.
	S3DollarsPerMillion float64
}

// Operation names of the requests table.
const (
	reqFirstCommit  = "first commit (the whole tree)"
	reqAppendCommit = "append 1 KiB + commit"
	reqNoopCommit   = "no-op commit"
	reqNoopPull     = "no-op pull"
	reqStatus       = "status"
	reqColdPull     = "cold pull (fresh private root: includes the startup probe)"
)

func (r *runner) requests(ctx context.Context, st *storeTarget) (RequestsResult, error) {
	files := r.prof.historyFiles
	res := RequestsResult{Files: files}
	base := r.tempDir("requests")
	nb := r.newNotebook(st, st.newLocation(), base, true)
	names, err := fill(nb.dir, files, noteSize)
	if err != nil {
		return res, err
	}
	st.proxy.take()
	record := func(op string, o Outcome, err error) error {
		if _, err := mustOK(o, err); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		counts := st.proxy.take()
		n := 0
		for _, c := range counts {
			n += c.Requests
		}
		res.Ops = append(res.Ops, RequestOp{Op: op, Wall: o.Wall, Requests: n, Counts: counts, S3DollarsPerMillion: s3PerMillion(counts, 1)})
		return nil
	}
	// pull of the empty notebook, so the directory has a baseline
	if _, err := mustOK(nb.pull(ctx)); err != nil {
		return res, err
	}
	st.proxy.take()
	o, err := nb.commit(ctx, "tree")
	if err := record(reqFirstCommit, o, err); err != nil {
		return res, err
	}
	// Three rounds: the first append after the tree may still warm caches;
	// all are reported.
	for i := range 3 {
		if err := appendTo(filepath.Join(nb.dir, filepath.FromSlash(names[i*37])), bench.NoteText(-1-i, appendSize)); err != nil {
			return res, err
		}
		o, err := nb.commit(ctx, "append")
		if err := record(reqAppendCommit, o, err); err != nil {
			return res, err
		}
	}
	o, err = nb.commit(ctx, "nothing")
	if err := record(reqNoopCommit, o, err); err != nil {
		return res, err
	}
	o, err = nb.pull(ctx)
	if err := record(reqNoopPull, o, err); err != nil {
		return res, err
	}
	o, err = runCLI(ctx, nb.bin, nb.env, "status", nb.dir)
	if err := record(reqStatus, o, err); err != nil {
		return res, err
	}
	cold := r.newNotebook(st, nb.loc, filepath.Join(base, "cold"), true)
	o, err = cold.pull(ctx)
	if err := record(reqColdPull, o, err); err != nil {
		return res, err
	}
	return res, nil
}

// FloorResult is the reference for one uncontended commit on SeaweedFS:
// one GET of the manifest and two PUTs (the pack, then the conditional
// replace of the manifest) by a bare SDK client in this process, with the
// object sizes of a real 1 KiB append commit; and the startup cost of a
// slivingdoc process that does nothing (`slivingdoc version`).
type FloorResult struct {
	PackSize     int
	ManifestSize int
	Requests     Dist // GET + PUT + conditional PUT, in-process
	Startup      OpStats
	// Budget is the CPU of the three requests' rounds, per party
	// (SeaweedFS; the load generator, whose client makes them): the CPU
	// floor of a commit, beside a contention row's per accepted commit.
	Budget Budget `json:",omitempty"`
	Rounds int    `json:",omitempty"` // the rounds Budget covers
}

func (r *runner) floor(ctx context.Context, srv *seaweed.Server, packSize, manifestSize int) (FloorResult, error) {
	res := FloorResult{PackSize: packSize, ManifestSize: manifestSize}
	client := srv.Client()
	key := fmt.Sprintf("loadgen-floor-%d/current", time.Now().UnixNano())
	manifest := make([]byte, manifestSize)
	pack := make([]byte, packSize)
	_, _ = rand.Read(manifest)
	put, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: &srv.Bucket, Key: &key, Body: bytes.NewReader(manifest)})
	if err != nil {
		return res, err
	}
	etag := put.ETag
	var ds []time.Duration
	var clock *budgetClock
	for i := range r.prof.floorReps + 1 {
		if i == 1 { // the first round opens the connection
			clock = startBudget(nil, srv.Pid())
		}
		start := time.Now()
		get, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: &srv.Bucket, Key: &key})
		if err != nil {
			return res, err
		}
		if _, err := new(bytes.Buffer).ReadFrom(get.Body); err != nil {
			return res, err
		}
		get.Body.Close()
		_, _ = rand.Read(pack)
		packKey := fmt.Sprintf("%s-pack-%d", key, i)
		if _, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: &srv.Bucket, Key: &packKey, Body: bytes.NewReader(pack)}); err != nil {
			return res, err
		}
		_, _ = rand.Read(manifest)
		out, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: &srv.Bucket, Key: &key, Body: bytes.NewReader(manifest), IfMatch: etag})
		if err != nil {
			return res, fmt.Errorf("conditional put: %w", err)
		}
		etag = out.ETag
		if i > 0 { // the first round opens the connection
			ds = append(ds, time.Since(start))
		}
	}
	if clock != nil {
		res.Budget, res.Rounds = clock.stop(0), r.prof.floorReps
	}
	res.Requests = summarize(ds)
	var startup []Sample
	for range r.prof.floorReps {
		o, err := runCLI(ctx, r.bin, cleanEnv(), "version")
		if err != nil {
			return res, err
		}
		startup = append(startup, o.Sample)
	}
	res.Startup = opStats(startup)
	return res, nil
}

// commitSizes reads the pack and manifest sizes of an append commit from
// the requests workload (defaults when it did not run).
func (rr *RequestsResult) commitSizes() (pack, manifest int) {
	pack, manifest = 3<<10, 1<<10
	if rr == nil {
		return
	}
	for _, op := range rr.Ops {
		if op.Op != reqAppendCommit {
			continue
		}
		for _, c := range op.Counts {
			switch c.Class {
			case "PUT packs/increments":
				pack = int(c.BytesUp / int64(c.Requests))
			case "PUT if-match current":
				manifest = int(c.BytesUp / int64(c.Requests))
			}
		}
	}
	return
}
