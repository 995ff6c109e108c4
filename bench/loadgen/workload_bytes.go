package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/slivingdoc/slivingdoc/bench"
)

// BytesResult is the bytes workload: 1 KiB appends to one 1 MiB file, and
// what each commit added to the store (listed before and after).
type BytesResult struct {
	Store     string
	FileSize  int
	Initial   int64   // bytes of the store after the first commit of the file
	PerCommit []int64 // bytes added by each append commit
	Median    int64
	Max       int64
}

const bigFileSize = 1 << 20

func (r *runner) bytesWorkload(ctx context.Context, st *storeTarget) (BytesResult, error) {
	res := BytesResult{Store: st.name, FileSize: bigFileSize}
	base := r.tempDir("bytes-" + st.name)
	nb := r.newNotebook(st, st.newLocation(), base, false)
	if _, err := mustOK(nb.pull(ctx)); err != nil {
		return res, err
	}
	path := filepath.Join(nb.dir, "big.md")
	if err := os.WriteFile(path, bench.NoteText(7, bigFileSize), 0o644); err != nil {
		return res, err
	}
	if _, err := mustOK(nb.commit(ctx, "1 MiB note")); err != nil {
		return res, err
	}
	before, err := r.storeBytes(ctx, st, nb.loc)
	if err != nil {
		return res, err
	}
	res.Initial = before
	for i := range r.prof.bytesAppends {
		if err := appendTo(path, bench.NoteText(100+i, appendSize)); err != nil {
			return res, err
		}
		if _, err := mustOK(nb.commit(ctx, fmt.Sprintf("append %d", i+1))); err != nil {
			return res, err
		}
		after, err := r.storeBytes(ctx, st, nb.loc)
		if err != nil {
			return res, err
		}
		res.PerCommit = append(res.PerCommit, after-before)
		before = after
	}
	res.Median, res.Max = medianInt(res.PerCommit), maxInt(res.PerCommit)
	return res, nil
}

func (r *runner) storeBytes(ctx context.Context, st *storeTarget, loc string) (int64, error) {
	objs, err := st.list(ctx, loc)
	if err != nil {
		return 0, err
	}
	b, _ := storeStats(objs)
	return b, nil
}
