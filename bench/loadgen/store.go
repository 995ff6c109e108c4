package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/slivingdoc/slivingdoc/internal/seaweed"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/filestore"
	"github.com/slivingdoc/slivingdoc/remote/s3store"
)

// storeTarget is a store the workloads run against. A location is one
// notebook in it: a directory of the file store, or a key prefix in the
// SeaweedFS bucket. Every workload takes fresh locations, so no two
// measurements share a notebook or a cache.
type storeTarget struct {
	name string
	// env points a slivingdoc process at loc; proxied routes S3 requests
	// through the counting proxy (SeaweedFS only).
	env func(loc string, proxied bool) []string
	// newLocation returns an empty notebook location.
	newLocation func() string
	// list returns every object of loc.
	list func(ctx context.Context, loc string) ([]object, error)
	// proxy counts the requests of proxied processes; nil for the file store.
	proxy *countingProxy
	// open opens loc as a store in this process, not through the proxy
	// (the format-4 seed, bench.SeedV4).
	open func(ctx context.Context, loc string) (remote.Store, error)
	// serverPid is the store server's process (SeaweedFS), whose CPU a
	// run's budget reads; nil for the file store, which has none.
	serverPid func() int
}

// pid is the store server's process ID, 0 for none.
func (t *storeTarget) pid() int {
	if t.serverPid == nil {
		return 0
	}
	return t.serverPid()
}

type object struct {
	Key  string
	Size int64
}

var locations atomic.Int64

func fileTarget(work string) *storeTarget {
	return &storeTarget{
		name: "file",
		env: func(loc string, _ bool) []string {
			return []string{"SLIVINGDOC_STORE=file://" + filepath.ToSlash(loc)}
		},
		newLocation: func() string {
			return filepath.Join(work, fmt.Sprintf("store-%03d", locations.Add(1)))
		},
		list: listDir,
		open: func(_ context.Context, loc string) (remote.Store, error) { return filestore.New(loc) },
	}
}

// listDir lists a file store: every regular file except its lock and
// temporary files, keyed by slash path.
func listDir(_ context.Context, root string) ([]object, error) {
	var objs []object
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) && p == root {
				return filepath.SkipAll // nothing published yet
			}
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == ".tmp" {
				return filepath.SkipDir
			}
			return nil
		}
		if rel == ".lock" {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		objs = append(objs, object{rel, info.Size()})
		return nil
	})
	return objs, err
}

func seaweedTarget(srv *seaweed.Server, proxy *countingProxy) *storeTarget {
	client := srv.Client()
	return &storeTarget{
		name:      "seaweedfs",
		serverPid: srv.Pid,
		env: func(loc string, proxied bool) []string {
			env := srv.Env()
			if proxied {
				env = append(env, "AWS_ENDPOINT_URL_S3="+proxy.URL) // later entries win
			}
			return append(env, "SLIVINGDOC_BUCKET="+srv.Bucket, "SLIVINGDOC_PREFIX="+loc,
				"SLIVINGDOC_PATH_STYLE=true", "AWS_CONFIG_FILE="+os.DevNull, "AWS_SHARED_CREDENTIALS_FILE="+os.DevNull)
		},
		newLocation: func() string { return fmt.Sprintf("loadgen-%03d", locations.Add(1)) },
		list: func(ctx context.Context, loc string) ([]object, error) {
			var objs []object
			prefix := loc + "/"
			p := s3.NewListObjectsV2Paginator(client, &s3.ListObjectsV2Input{Bucket: &srv.Bucket, Prefix: &prefix})
			for p.HasMorePages() {
				page, err := p.NextPage(ctx)
				if err != nil {
					return nil, err
				}
				for _, o := range page.Contents {
					objs = append(objs, object{strings.TrimPrefix(*o.Key, prefix), *o.Size})
				}
			}
			return objs, nil
		},
		proxy: proxy,
		open: func(ctx context.Context, loc string) (remote.Store, error) {
			return s3store.New(ctx, s3store.Config{Bucket: srv.Bucket, Prefix: loc, Region: srv.Region, Endpoint: srv.Endpoint,
				PathStyle: true, AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey})
		},
	}
}

// storeStats sums a listing: all bytes, and the number of packs uploaded:
// increment packs (each attempt that writes uploads its own, and a lost
// attempt's pack stays until a checkpoint's cleanup), the registrations
// an older binary's group commit left, each of which carries its
// proposal's pack (until a cleanup removes it), and format 4's proposals,
// each a commit's own pack
// (no cleanup of them exists yet). Format 4's fold markers and registered
// descriptors under proposals/ are not packs of a commit and are left out.
func storeStats(objs []object) (bytes int64, packs int) {
	for _, o := range objs {
		bytes += o.Size
		reg := strings.HasPrefix(o.Key, "proposals/") && !strings.HasSuffix(o.Key, "-lead") && !strings.HasSuffix(o.Key, "-group") &&
			!strings.Contains(o.Key, ".fold.") && !registeredDescriptor(o.Key)
		if strings.HasPrefix(o.Key, "packs/increments/") || reg {
			packs++
		}
	}
	return bytes, packs
}

// registeredDescriptor reports whether key is format 4's descriptor of a
// rollup or a checkpoint, registered under proposals/ as
// proposals/<G, 20 digits>-r-<sum> or -c-<sum> (remote.RegisteredKey): an
// upload of its own, not a commit's proposal.
func registeredDescriptor(key string) bool {
	rest, ok := strings.CutPrefix(key, "proposals/")
	if !ok || len(rest) < 23 {
		return false
	}
	return strings.Trim(rest[:20], "0123456789") == "" && (rest[20:23] == "-r-" || rest[20:23] == "-c-")
}
