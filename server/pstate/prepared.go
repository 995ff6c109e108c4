package pstate

import (
	"reflect"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/internal/crashpoint"
	"github.com/slivingdoc/slivingdoc/internal/osfile"
)

// Prepared is a baseline written ahead: encoded, written to
// P/.baseline.spare and fsynced on its own goroutine while the commit
// that would make it A is being published, so that recording A once the
// publication is accepted costs the exchange and the fsync of P's directory
// only. It is a temporary file like any other until then: the baseline
// file is replaced only after acceptance, so a crash at any point leaves
// the old or the new baseline, as WriteAtomic does; a publication that is
// not accepted, or whose accepted state differs from the one prepared
// (another generation or head, or L to be rewritten), discards it. The
// name is fixed so that a crash leaves at most one such file, which the
// next preparation overwrites; a discarded preparation's file is kept for
// it too (a commit whose L is rewritten discards its preparation, and
// removing the file would make the next commit create it again). It is
// never read: only an install puts its bytes under the baseline's name.
//
// Installing exchanges the two files (osfile.Exchange) rather than
// renaming one over the other: the spare then holds the old baseline,
// which no one reads, and the next commit's preparation writes over it, so
// a commit neither creates nor frees an inode for A (about 150 µs of CPU
// each on an ext4 disk that frees inodes often). That reuse is safe
// because A is read only under the directory's lock, never by a reader
// that could still hold the old file open.
type Prepared struct {
	gen   uint64
	head  cas.ID
	files map[string]cas.ID
	tmp   string
	done  chan struct{}
	data  []byte // set with err once done
	err   error
}

// BaselineSpare is the prepared baseline's file (Prepared).
const BaselineSpare = ".baseline.spare"

// Prepare starts writing b ahead. b.Files must not change until the
// preparation is waited for.
func (d Dir) Prepare(b *Baseline) *Prepared {
	p := &Prepared{gen: b.Generation, head: b.Head, files: b.Files, tmp: d.File(BaselineSpare), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.data = encodeBaseline(b)
		// Written over the spare's blocks (the baseline before the last
		// install), not truncated and allocated again.
		p.err = osfile.WriteOver(p.tmp, 0o600, true, p.data)
	}()
	return p
}

// Wait returns once the preparation is done, with its outcome.
func (p *Prepared) Wait() error {
	<-p.done
	return p.err
}

// Matches reports whether b is the baseline prepared: the same generation
// and head, and the very tree (the map it was encoded from, still held).
func (p *Prepared) Matches(b *Baseline) bool {
	return p.gen == b.Generation && p.head == b.Head && b.Exact() && sameMap(p.files, b.Files)
}

// install makes the prepared file the baseline (exchange, then fsync of
// P's directory, as WriteAtomic).
func (p *Prepared) install(d Dir) error {
	crashpoint.Hit(cpInstallBaseline, baselineFile)
	if err := osfile.Exchange(p.tmp, d.File(baselineFile)); err != nil {
		return err
	}
	return osfile.SyncDir(d.Path)
}

// Discard waits for the preparation, whose file then stays as the spare
// the next preparation writes over (installed, it holds the baseline
// before; not, the baseline never recorded).
func (p *Prepared) Discard() {
	if p == nil {
		return
	}
	p.Wait()
}

// sameMap reports whether a and b are one map (not merely equal ones).
func sameMap(a, b map[string]cas.ID) bool {
	if a == nil || b == nil {
		return false
	}
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}
