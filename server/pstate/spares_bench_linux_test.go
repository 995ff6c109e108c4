//go:build linux

package pstate

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/osfile"
)

// P's side of one rewrite of L (next baseline, record, flag; install,
// clear, remove), as this version does it through spares ("spares",
// rewriteCycle's calls) beside the same writes through a new temporary
// file each, as earlier versions made them ("temporary files": three
// files created and three freed per rewrite). Besides the time, it
// reports the process's CPU per rewrite (user and system, getrusage):
// the fsyncs' waits dominate the time, while what the fleet rows pay for
// is the CPU, most of it the file system's create and free of an inode.
// A baseline of 100 paths (about 7 KB), as a 10-writer notebook has.
func BenchmarkRewriteRecords(b *testing.B) {
	files := map[string]cas.ID{}
	for i := range 100 {
		files[fmt.Sprintf("notes/writer-%02d/file-%03d.md", i%10, i)] = cas.Sum([]byte{byte(i)})
	}
	for _, v := range []struct {
		name  string
		cycle func(b *testing.B, d Dir, next *Baseline)
	}{{"spares", cycleSpares}, {"temporary-files", cycleTemporaryFiles}} {
		b.Run("via="+v.name, func(b *testing.B) {
			d := Dir{Path: b.TempDir()}
			if err := WriteAtomic(d.File(baselineFile), encodeBaseline(&Baseline{Generation: 1, Files: files})); err != nil {
				b.Fatal(err)
			}
			next := &Baseline{Head: cas.Sum([]byte("h")), Files: files}
			next.Generation = 2
			v.cycle(b, d, next) // the first rewrite makes the spares
			before := cpuTime(b)
			b.ResetTimer()
			for i := range b.N {
				next.Generation = uint64(i) + 3
				v.cycle(b, d, next)
			}
			b.StopTimer()
			b.ReportMetric(float64(cpuTime(b)-before)/1e3/float64(b.N), "cpu-µs/op")
		})
	}
}

// cpuTime is the process's user and system CPU so far, in ns.
func cpuTime(b *testing.B) int64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func cycleSpares(b *testing.B, d Dir, next *Baseline) {
	n, err := d.SaveNextBaseline(next, nil)
	if err != nil {
		b.Fatal(err)
	}
	sum, err := d.SaveRewrite(&RewriteRecord{NextSum: n.Sum, Entries: []RewriteEntry{{Path: "a.md"}}})
	if err != nil {
		b.Fatal(err)
	}
	if err := d.SetRecovery(RecoveryFlag{Op: "commit", Stage: "rewrite", RemoteAccepted: "yes", Generation: next.Generation, Rewrite: sum}); err != nil {
		b.Fatal(err)
	}
	if err := d.InstallNextBaseline(n.File); err != nil {
		b.Fatal(err)
	}
	if err := d.ClearRecovery(); err != nil {
		b.Fatal(err)
	}
	d.RemoveRewrite()
}

// cycleTemporaryFiles is the reference: the same records, each written
// through a new temporary file (osfile.WriteFile) and removed.
func cycleTemporaryFiles(b *testing.B, d Dir, next *Baseline) {
	data := encodeBaseline(next)
	var nextSum [32]byte
	copy(nextSum[:], data[len(data)-32:])
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	must(osfile.WriteFile(d.File(oldNextBaselineFile), 0o600, true, data))
	rec := encodeRewrite(&RewriteRecord{NextSum: nextSum, Entries: []RewriteEntry{{Path: "a.md"}}})
	name := d.File(fmt.Sprintf("%s%x", rewritePrefix, rec[len(rec)-32:]))
	must(osfile.WriteFile(name, 0o600, true, rec))
	must(osfile.WriteFile(d.File("recovery"), 0o600, true, []byte(`{"op":"commit","stage":"rewrite","remoteAccepted":"yes","generation":3,"rewrite":"`+filepath.Base(name)+`"}`)))
	must(os.Rename(d.File(oldNextBaselineFile), d.File(baselineFile)))
	must(osfile.SyncDir(d.Path))
	must(os.Remove(d.File("recovery")))
	must(osfile.SyncDir(d.Path))
	must(os.Remove(name))
}
