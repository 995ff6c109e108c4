package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/slivingdoc/slivingdoc/bench"
	"github.com/slivingdoc/slivingdoc/remote"
)

// BytesResult is the bytes workload, the two store-size rows of DESIGN
// §10: 1 KiB appends to one 1 MiB file, with what each commit added to the
// store (listed before and after); then a notebook of many small files
// receiving one-line commits, with the store's total size. Both say where
// the bytes went (Added, Tree.Classes), since a total alone does not show
// which kind of object regressed.
type BytesResult struct {
	Store     string
	FileSize  int
	Initial   int64   // bytes of the store after the first commit of the file
	PerCommit []int64 // bytes added by each append commit
	// Mean is the verdict's figure: everything the appends stored, rollups
	// and checkpoints included, over their count. A median hides the
	// commits that end rollup blocks (one in two), and the large ones.
	Mean   int64
	Median int64
	Max    int64
	Added  []ByteClass // what the appends added, by kind of object
	Tree   *TreeBytes  // nil: not run (older results)
}

// TreeBytes is the second part: Files files of FileSize bytes committed at
// once, then Commits commits of one line each; the store's size after all
// of them.
type TreeBytes struct {
	Files, FileSize, Commits int
	AfterTree                int64       // the store after the first commit
	Total                    int64       // after the one-line commits
	Classes                  []ByteClass // Total by kind of object
}

// ByteClass is the bytes and objects of one kind of key.
type ByteClass struct {
	Class   string
	Objects int
	Bytes   int64
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
	objs, err := st.list(ctx, nb.loc)
	if err != nil {
		return res, err
	}
	start := byClass(objs)
	before, _ := storeStats(objs)
	res.Initial = before
	for i := range r.prof.bytesAppends {
		if err := appendTo(path, bench.NoteText(100+i, appendSize)); err != nil {
			return res, err
		}
		if _, err := mustOK(nb.commit(ctx, fmt.Sprintf("append %d", i+1))); err != nil {
			return res, err
		}
		if objs, err = st.list(ctx, nb.loc); err != nil {
			return res, err
		}
		after, _ := storeStats(objs)
		res.PerCommit = append(res.PerCommit, after-before)
		before = after
	}
	res.Added = subClasses(byClass(objs), start)
	res.Mean, res.Median, res.Max = meanInt(res.PerCommit), medianInt(res.PerCommit), maxInt(res.PerCommit)
	tree, err := r.treeBytes(ctx, st)
	if err != nil {
		return res, err
	}
	res.Tree = &tree
	return res, nil
}

// treeBytes is the second part of the workload (TreeBytes).
func (r *runner) treeBytes(ctx context.Context, st *storeTarget) (TreeBytes, error) {
	res := TreeBytes{Files: r.prof.storeFiles, FileSize: noteSize, Commits: r.prof.storeCommits}
	base := r.tempDir("store-size-" + st.name)
	nb := r.newNotebook(st, st.newLocation(), base, false)
	if _, err := mustOK(nb.pull(ctx)); err != nil {
		return res, err
	}
	names, err := fill(nb.dir, res.Files, res.FileSize)
	if err != nil {
		return res, err
	}
	if _, err := mustOK(nb.commit(ctx, "tree")); err != nil {
		return res, err
	}
	if res.AfterTree, err = r.storeBytes(ctx, st, nb.loc); err != nil {
		return res, err
	}
	for i := range res.Commits {
		name := filepath.FromSlash(names[(i*7919)%len(names)])
		words := strings.TrimSpace(strings.ReplaceAll(string(bench.NoteText(-1-i, 40)), "\n", " "))
		line := fmt.Sprintf("- one-line commit %d: %s\n", i+1, words)
		if err := appendTo(filepath.Join(nb.dir, name), []byte(line)); err != nil {
			return res, err
		}
		if _, err := mustOK(nb.commit(ctx, fmt.Sprintf("line %d", i+1))); err != nil {
			return res, fmt.Errorf("commit %d: %w", i+1, err)
		}
	}
	objs, err := st.list(ctx, nb.loc)
	if err != nil {
		return res, err
	}
	res.Total, _ = storeStats(objs)
	res.Classes = byClass(objs)
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

// classOf names the kind of a store key (docs/storage.md §2): rollups by
// level, since each level is a full copy of what changed over the history.
func classOf(key string) string {
	switch {
	case strings.HasPrefix(key, remote.IncrementsPrefix):
		return "increments"
	case strings.HasPrefix(key, remote.RollupsPrefix):
		if l, _, err := remote.ParseRollupKey(key); err == nil {
			return fmt.Sprintf("rollups L%d", l)
		}
		return "rollups"
	case strings.HasPrefix(key, remote.CheckpointsPrefix):
		return "checkpoints"
	case strings.HasPrefix(key, "index/"):
		return "segments"
	case strings.HasPrefix(key, "proposals/"):
		return "proposals"
	case key == remote.CurrentKey:
		return "current"
	}
	return "other"
}

// byClass sums objs by classOf, in a stable order (increments, rollups by
// level, then the rest by name).
func byClass(objs []object) []ByteClass {
	m := map[string]*ByteClass{}
	for _, o := range objs {
		c := classOf(o.Key)
		if m[c] == nil {
			m[c] = &ByteClass{Class: c}
		}
		m[c].Objects++
		m[c].Bytes += o.Size
	}
	out := make([]ByteClass, 0, len(m))
	for _, c := range m {
		out = append(out, *c)
	}
	sortClasses(out)
	return out
}

func sortClasses(cs []ByteClass) {
	rank := func(c string) string {
		switch {
		case c == "increments":
			return "0"
		case strings.HasPrefix(c, "rollups L"):
			return fmt.Sprintf("1%02s", strings.TrimPrefix(c, "rollups L"))
		}
		return "2" + c
	}
	slices.SortFunc(cs, func(a, b ByteClass) int { return strings.Compare(rank(a.Class), rank(b.Class)) })
}

// subClasses is after − before, class by class (classes that did not
// change are left out).
func subClasses(after, before []ByteClass) []ByteClass {
	was := map[string]ByteClass{}
	for _, c := range before {
		was[c.Class] = c
	}
	var out []ByteClass
	for _, c := range after {
		d := ByteClass{Class: c.Class, Objects: c.Objects - was[c.Class].Objects, Bytes: c.Bytes - was[c.Class].Bytes}
		if d.Objects != 0 || d.Bytes != 0 {
			out = append(out, d)
		}
	}
	return out
}

// fmtClasses renders classes as "increments 200 objects 1.5 MB; …".
func fmtClasses(cs []ByteClass) string {
	parts := make([]string, 0, len(cs))
	for _, c := range cs {
		parts = append(parts, fmt.Sprintf("%s %s (%d)", c.Class, fmtBytes(c.Bytes), c.Objects))
	}
	return strings.Join(parts, ", ")
}
