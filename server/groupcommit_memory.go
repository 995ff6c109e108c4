package server

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/slivingdoc/slivingdoc/remote"
)

// contentionFile is the remote.ContentionMemory of a CLI process, kept in
// P/stores/<storeKey>/contention so that one writer's consecutive
// commits, each its own process, share what the last one met. Bytes, one
// line: "1 <contended> <published> <generation>\n", the times in Unix
// nanoseconds (0: never). It is a hint: a missing, unreadable or
// malformed file reads as "no contention" (the commit then races first,
// as without group commit), and a failed write is ignored.
type contentionFile struct{ path string }

func newContentionFile(storeDir string) remote.ContentionMemory {
	return contentionFile{path: filepath.Join(storeDir, "contention")}
}

func (f contentionFile) Load() remote.ContentionRecord {
	data, err := os.ReadFile(f.path)
	if err != nil {
		return remote.ContentionRecord{}
	}
	var version int
	var contended, published int64
	var gen uint64
	if n, err := fmt.Sscanf(string(data), "%d %d %d %d\n", &version, &contended, &published, &gen); err != nil || n != 4 || version != 1 {
		return remote.ContentionRecord{}
	}
	return remote.ContentionRecord{Contended: unixNano(contended), Published: unixNano(published), Generation: gen}
}

func (f contentionFile) Save(r remote.ContentionRecord) {
	data := fmt.Sprintf("1 %d %d %d\n", nanoOf(r.Contended), nanoOf(r.Published), r.Generation)
	if err := os.WriteFile(f.path, []byte(data), 0o600); err == nil {
		return
	}
	if err := os.MkdirAll(filepath.Dir(f.path), 0o700); err == nil {
		_ = os.WriteFile(f.path, []byte(data), 0o600)
	}
}

func unixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

func nanoOf(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}
