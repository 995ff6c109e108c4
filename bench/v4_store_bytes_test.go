package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server"
)

// BenchmarkV4StoreBytes is the load generator's bytes workload
// (bench/loadgen/workload_bytes.go, the two store-size rows of the
// performance targets) on a store of format version 4, in this process:
// each commit is a fresh engine that commits and closes, as a CLI process
// does (Close waits for the rollups and checkpoints it started), over the
// in-memory store, whose listing gives every object's size. The load
// generator runs the built binary and cannot seed a version-4 store for
// this workload; the bytes stored do not depend on the process.
//
//	go test -run '^$' -bench V4StoreBytes -benchtime 1x ./bench
//
// Row 1: a 1 MiB note, then 200 appends of 1 KiB; the mean of what each
// append stored, everything included (target ≤ 16 KiB). Row 2: 1,000
// notes of 2 KB in ten directories at once, then 200 one-line commits to
// notes picked as the load generator picks them; the store's size
// (target ≤ 2.1 MB).
func BenchmarkV4StoreBytes(b *testing.B) {
	for range b.N {
		ctx := context.Background()
		// Row 1.
		w := newV4Writer(b)
		w.write("big.md", NoteText(7, 1<<20))
		w.commit(ctx, "1 MiB note")
		start := w.classes(ctx)
		for i := range 200 {
			w.appendTo("big.md", NoteText(100+i, 1024))
			w.commit(ctx, fmt.Sprintf("append %d", i+1))
		}
		added := w.classes(ctx)
		total := int64(0)
		for c, n := range added {
			added[c] = n - start[c]
			total += added[c]
		}
		b.ReportMetric(float64(total)/200/1024, "KiB/append")
		b.Logf("1 MiB note, 200 appends of 1 KiB: %.1f KiB stored per append on average (%s)", float64(total)/200/1024, fmtClasses(added))
		// Row 2.
		w = newV4Writer(b)
		var names []string
		for i := range 1000 {
			names = append(names, fmt.Sprintf("d%03d/note-%05d.md", i/100, i))
			w.write(names[i], NoteText(i, 2048))
		}
		w.commit(ctx, "tree")
		tree := w.classes(ctx)
		for i := range 200 {
			words := strings.TrimSpace(strings.ReplaceAll(string(NoteText(-1-i, 40)), "\n", " "))
			w.appendTo(names[(i*7919)%len(names)], []byte(fmt.Sprintf("- one-line commit %d: %s\n", i+1, words)))
			w.commit(ctx, fmt.Sprintf("line %d", i+1))
		}
		all := w.classes(ctx)
		sum := func(m map[string]int64) (t int64) {
			for _, n := range m {
				t += n
			}
			return t
		}
		b.ReportMetric(float64(sum(all))/1e6, "MB-tree-row")
		b.Logf("1,000 notes of 2 KB, then 200 one-line commits: %.2f MB (%.2f MB after the first commit; %s)",
			float64(sum(all))/1e6, float64(sum(tree))/1e6, fmtClasses(all))
	}
}

// v4Writer is a directory whose commits are CLI-like processes on a
// version-4 in-memory store.
type v4Writer struct {
	b             *testing.B
	store         *memstore.Mem
	ws, priv, dir string
}

func newV4Writer(b *testing.B) *v4Writer {
	root := b.TempDir()
	w := &v4Writer{b: b, store: memstore.New(), ws: filepath.Join(root, "ws"), priv: filepath.Join(root, "private")}
	w.dir = filepath.Join(w.ws, "notes")
	for _, d := range []string{w.dir, w.priv} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	w.run(func(e *server.Engine) error {
		_, err := e.Pull(context.Background(), "")
		return err
	})
	return w
}

// run is one process: an engine that does f and closes.
func (w *v4Writer) run(f func(e *server.Engine) error) {
	e, err := server.New(server.Config{Store: w.store, PrivateRoot: w.priv, WorkspaceRoot: w.ws, DefaultDir: w.dir})
	if err != nil {
		w.b.Fatal(err)
	}
	if err := f(e); err != nil {
		w.b.Fatal(err)
	}
	if err := e.Close(); err != nil {
		w.b.Fatal(err)
	}
}

func (w *v4Writer) write(name string, data []byte) {
	p := filepath.Join(w.dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		w.b.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		w.b.Fatal(err)
	}
}

func (w *v4Writer) appendTo(name string, data []byte) {
	f, err := os.OpenFile(filepath.Join(w.dir, filepath.FromSlash(name)), os.O_APPEND|os.O_WRONLY, 0o644)
	if err == nil {
		_, err = f.Write(data)
		err = errorsJoin(err, f.Close())
	}
	if err != nil {
		w.b.Fatal(err)
	}
}

func errorsJoin(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func (w *v4Writer) commit(ctx context.Context, msg string) {
	w.run(func(e *server.Engine) error {
		_, err := e.Commit(ctx, "", msg)
		return err
	})
}

// classes sums the store's bytes by kind of object.
func (w *v4Writer) classes(ctx context.Context) map[string]int64 {
	objs, err := w.store.List(ctx, "")
	if err != nil {
		w.b.Fatal(err)
	}
	out := map[string]int64{}
	for _, o := range objs {
		out[v4Class(o.Key)] += o.Size
	}
	return out
}

func v4Class(key string) string {
	kind, _, _, _, _ := remote.ParseProposalEntry(key)
	switch {
	case kind == remote.EntryProposal:
		return "proposals"
	case kind == remote.EntryRollup || kind == remote.EntryCheckpoint:
		return "descriptors"
	case strings.HasPrefix(key, remote.RollupsPrefix):
		return "rollups"
	case strings.HasPrefix(key, remote.CheckpointsPrefix):
		return "checkpoints"
	case strings.HasPrefix(key, remote.GroupsPrefix):
		return "group packs"
	case strings.HasPrefix(key, "index/"):
		return "segments"
	case key == remote.CurrentKey:
		return "current"
	}
	return "other"
}

func fmtClasses(m map[string]int64) string {
	var parts []string
	for c, n := range m {
		parts = append(parts, fmt.Sprintf("%s %.1f KiB", c, float64(n)/1024))
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}
