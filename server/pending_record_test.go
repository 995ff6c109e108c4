package server

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// pendingFile returns the path of a's pending publication record.
func pendingFile(a *agent) string { return filepath.Join(a.e.stateDir(a.dir), "pending") }

// A record as the first versions wrote it (plain JSON, no checksum) is
// still adopted: a commit killed by an older binary does not make the next
// commit of a newer one conflict with itself.
func TestPendingRecordWithoutChecksumIsAdopted(t *testing.T) {
	store, a := editAfterCommit(t)
	killCommitAt(t, a, store, FailAfterPublish, "two")
	data, err := os.ReadFile(pendingFile(a))
	if err != nil {
		t.Fatal(err)
	}
	end := bytes.LastIndexByte(data[:len(data)-1], '\n')
	if end < 0 || len(data)-end != pendingSumLen {
		t.Fatalf("record has no checksum trailer: %q", data)
	}
	if err := os.WriteFile(pendingFile(a), data[:end], 0o600); err != nil {
		t.Fatal(err)
	}
	a.appendTo("n.md", "y\n")
	a.commit("three")
	wantPublished(t, store, "n.md", "a\nx\ny\n")
}

// A record whose bytes no longer match its checksum (a write torn by a
// crash) is not adopted, even when it still parses: the commit then merges
// against the recorded baseline, where the writer's own accepted lines
// meet its next edit as a conflict, instead of trusting a damaged overlay.
func TestTornPendingRecordIsNotAdopted(t *testing.T) {
	store, a := editAfterCommit(t)
	killCommitAt(t, a, store, FailAfterPublish, "two")
	data, err := os.ReadFile(pendingFile(a))
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte(`"n.md":"`))
	if i < 0 {
		t.Fatalf("record does not name n.md: %q", data)
	}
	at := i + len(`"n.md":"`)
	flip := byte('0')
	if data[at] == '0' {
		flip = '1'
	}
	data[at] = flip // still JSON, still a hex ID: only the checksum tells
	if err := os.WriteFile(pendingFile(a), data, 0o600); err != nil {
		t.Fatal(err)
	}
	a.appendTo("n.md", "y\n")
	_, err = a.e.Commit(t.Context(), "", "three")
	domainErr(t, err, CodeContentConflict, ReasonMergeConflict)
	wantPublished(t, store, "n.md", "a\nx\n")
}
