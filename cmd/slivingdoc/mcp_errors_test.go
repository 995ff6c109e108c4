//go:build unix

package main

// One test per row of docs/errors.md (diag.Catalog), through MCP against
// the built binary: code, reason, action and retryable as the table says,
// the files with their reasons and ranges, and the candid text item. A row
// without a test fails TestMCPErrorRows, so the table cannot grow silently.
//
// Rows that need the store or the disk to misbehave use the file store and
// the private state on disk: a corrupted or deleted object, a symlink loop,
// or `chattr +i` (which refuses writes even to root).

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/zeebo/blake3"

	"github.com/slivingdoc/slivingdoc/server/diag"
)

type rowTest func(t *testing.T, nb *notebook, row diag.CatalogRow)

var rowTests = map[string]rowTest{
	"INVALID_REQUEST/INVALID_ARGUMENT":       rowInvalidArgument,
	"INVALID_REQUEST/PATH_OUTSIDE_ROOT":      rowPathOutsideRoot,
	"INVALID_REQUEST/PATH_NOT_DIRECTORY":     rowPathNotDirectory,
	"INVALID_REQUEST/BLANK_MESSAGE":          rowBlankMessage,
	"INVALID_REQUEST/NOT_PULLED":             rowNotPulled,
	"INVALID_CONTENT/INVALID_FILES":          rowInvalidFiles,
	"CONTENT_CONFLICT/MERGE_CONFLICT":        rowMergeConflict,
	"CONTENT_CONFLICT/UNRESOLVED_MARKERS":    rowUnresolvedMarkers,
	"READ_ONLY_PATH/OUTSIDE_WRITABLE":        rowOutsideWritable,
	"READ_ONLY_PATH/INSIDE_READ_ONLY":        rowInsideReadOnly,
	"REMOTE_BUSY/RETRIES_EXHAUSTED":          rowRetriesExhausted, // mcp_ratelimit_test.go
	"STORAGE_FAILURE/STORE_UNREACHABLE":      rowStoreUnreachable,
	"STORAGE_FAILURE/ACCESS_DENIED":          rowAccessDenied,
	"STORAGE_FAILURE/ACCEPTANCE_UNKNOWN":     rowAcceptanceUnknown,
	"STORAGE_INTEGRITY/CORRUPT_MANIFEST":     rowCorruptManifest,
	"STORAGE_INTEGRITY/CORRUPT_PACK":         rowCorruptPack,
	"STORAGE_INTEGRITY/MISSING_PACK":         rowMissingPack,
	"STORAGE_INTEGRITY/CACHE_CORRUPT":        rowCacheCorrupt,
	"STORAGE_INTEGRITY/GENERATION_REGRESSED": rowGenerationRegressed,
	"ENGINE_FAILED/LOCAL_IO":                 rowLocalIO,
	"ENGINE_FAILED/INTERNAL":                 rowInternal,
	"STORAGE_FAILURE/INCOMPATIBLE_STORE":     rowIncompatibleStore,
	"RECOVERY_FAILURE/RESYNCHRONIZED":        rowResynchronized,
	"RECOVERY_FAILURE/RECOVERY_PENDING":      rowRecoveryPending,
	// CLI-only (history commands): tested through the CLI.
	"INVALID_REQUEST/HISTORY_UNAVAILABLE": rowHistoryUnavailable,
	"INVALID_REQUEST/UNCOMMITTED_CHANGES": rowUncommittedChanges, // cli_history_uncommitted_test.go
	"INVALID_REQUEST/CONTAINS_NOTEBOOK":   rowContainsNotebook,   // mcp_nesting_test.go
	"ENGINE_FAILED/BASELINE_LOST":         rowBaselineLost,       // mcp_nesting_test.go
	"INVALID_REQUEST/DIRECTORY_NOT_EMPTY": rowDirectoryNotEmpty,  // mcp_nesting_test.go
	"INVALID_REQUEST/STORE_MISMATCH":      rowStoreMismatch,      // mcp_store_mismatch_test.go
}

func TestMCPErrorRows(t *testing.T) {
	for _, row := range diag.Catalog {
		key := string(row.Code) + "/" + row.Reason
		t.Run(key, func(t *testing.T) {
			f, ok := rowTests[key]
			if !ok {
				t.Fatalf("docs/errors.md row %s has no MCP test", key)
			}
			f(t, newNotebook(t, backends[0]), row)
		})
	}
}

// wantRow asserts the result is exactly the catalog row.
func wantRow(t *testing.T, r result, row diag.CatalogRow) {
	t.Helper()
	wantError(t, r, string(row.Code), row.Reason, string(row.Action), row.Retryable)
	for _, f := range r.files() {
		reason := f["reason"].(string)
		if !contains(row.FileReasons, reason) {
			t.Errorf("file reason %s is not in the row's set %v", reason, row.FileReasons)
		}
	}
	if _, ok := r.s["detail"]; ok && row.Code != diag.CodeEngineFailed {
		t.Errorf("detail outside ENGINE_FAILED: %s", r.raw)
	}
	if _, ok := r.s["recovery"]; ok != (row.Code == diag.CodeRecoveryFailure) {
		t.Errorf("recovery presence wrong for %s: %s", row.Code, r.raw)
	}
}

func contains(set []string, s string) bool {
	for _, x := range set {
		if x == s {
			return true
		}
	}
	return false
}

func wantNoFiles(t *testing.T, r result) {
	t.Helper()
	if len(r.files()) != 0 {
		t.Fatalf("files should be empty: %s", r.raw)
	}
}

// immutable sets the immutable attribute (refused writes, even for root)
// on paths, and clears it when the test ends.
func immutable(t *testing.T, paths ...string) {
	t.Helper()
	args := append([]string{"-R", "+i"}, paths...)
	if out, err := exec.Command("chattr", args...).CombinedOutput(); err != nil {
		t.Skipf("chattr +i unavailable here (%v: %s); the row needs a write the OS refuses", err, out)
	}
	t.Cleanup(func() { exec.Command("chattr", append([]string{"-R", "-i"}, paths...)...).Run() })
}

func rowInvalidArgument(t *testing.T, nb *notebook, row diag.CatalogRow) {
	s := nb.agent("a").serve()
	r := s.call(ToolPullName, map[string]any{"path": "", "dir": "/x"})
	wantRow(t, r, row)
	wantNoFiles(t, r)
	r = s.call(ToolCommitName, map[string]any{"message": nil})
	wantRow(t, r, row)
}

func rowPathOutsideRoot(t *testing.T, nb *notebook, row diag.CatalogRow) {
	a := nb.agent("a")
	s := a.serve()
	for _, p := range []string{"/", filepath.Join(a.dir, "..", "elsewhere")} {
		wantRow(t, s.call(ToolPullName, map[string]any{"path": p}), row)
	}
	// A symlink inside the root that points out of it is outside too.
	if err := os.Symlink(os.TempDir(), filepath.Join(a.dir, "out")); err != nil {
		t.Fatal(err)
	}
	wantRow(t, s.call(ToolPullName, map[string]any{"path": filepath.Join(a.dir, "out")}), row)
}

func rowPathNotDirectory(t *testing.T, nb *notebook, row diag.CatalogRow) {
	a := nb.agent("a")
	s := a.serve()
	a.write("file.md", "x\n")
	wantRow(t, s.call(ToolPullName, map[string]any{"path": filepath.Join(a.dir, "file.md")}), row)
}

func rowBlankMessage(t *testing.T, nb *notebook, row diag.CatalogRow) {
	s := nb.agent("a").serve()
	s.pull()
	for _, m := range []string{"", " ", "\t\n\u00a0\u2003\u3000"} {
		wantRow(t, s.call(ToolCommitName, map[string]any{"message": m}), row)
	}
}

func rowNotPulled(t *testing.T, nb *notebook, row diag.CatalogRow) {
	a := nb.agent("a")
	s := a.serve()
	a.write("a.md", "never pulled\n")
	r := s.call(ToolCommitName, map[string]any{"message": "m"})
	wantRow(t, r, row)
	if a.read("a.md") != "never pulled\n" {
		t.Fatal("a refused commit changed the file")
	}
}

func rowInvalidFiles(t *testing.T, nb *notebook, row diag.CatalogRow) {
	a := nb.agent("a")
	s := a.serve()
	s.pull()
	a.write("ok.md", "fine\n")
	a.write("bad-utf8.md", "caf\xe9\n")
	a.write("zero.md", "a\x00b\n")
	a.write("Case.md", "1\n")
	a.write("case.md", "2\n")
	a.write("a:b.md", "colon\n")
	if err := os.Symlink("ok.md", filepath.Join(a.dir, "link.md")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(a.dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	long := deepFile(t, a.dir)
	short := []string{"ok.md", "bad-utf8.md", "zero.md", "Case.md", "case.md", "a:b.md", "link.md", "pipe"}
	r := s.call(ToolCommitName, map[string]any{"message": "bad files"})
	wantRow(t, r, row)
	got := fileReasons(r)
	want := map[string]string{
		"bad-utf8.md": diag.FileInvalidUTF8,
		"zero.md":     diag.FileNulByte,
		"link.md":     diag.FileSymlink,
		"pipe":        diag.FileSpecial,
		"a:b.md":      diag.FileInvalidName,
	}
	for p, reason := range want {
		if got[p] != reason {
			t.Errorf("file %.60s: reason %q, want %s (all: %v)", p, got[p], reason, got)
		}
	}
	tooLong := false
	for p, reason := range got {
		tooLong = tooLong || reason == diag.FilePathTooLong && len(p) > 4096 && strings.HasPrefix(long, p)
	}
	if !tooLong {
		t.Errorf("no PATH_TOO_LONG for the deep file or its first too-long ancestor")
	}
	if got["Case.md"] != diag.FileNameCollision && got["case.md"] != diag.FileNameCollision {
		t.Errorf("no NAME_COLLISION for Case.md/case.md: %v", got)
	}
	if _, ok := got["ok.md"]; ok {
		t.Errorf("a valid file is listed: %v", got)
	}
	// Nothing was published or deleted.
	for _, p := range short {
		if _, err := os.Lstat(filepath.Join(a.dir, p)); err != nil {
			t.Errorf("%s after the refused commit: %v", p, err)
		}
	}
	if root, err := os.OpenRoot(a.dir); err != nil {
		t.Fatal(err)
	} else if _, err := root.Lstat(long); err != nil {
		t.Errorf("the deep file after the refused commit: %v", err)
	}
	b := nb.agent("b").serve()
	if r := b.pull(); r.s["generation"] != float64(0) {
		t.Errorf("something was published: %s", r.raw)
	}
}

// deepFile makes a file whose notebook path exceeds 4,096 bytes, one
// directory at a time (the absolute path is too long for one system call).
func deepFile(t *testing.T, dir string) string {
	t.Helper()
	seg := strings.Repeat("n", 250) // not a hex digit: the leak scan must not see an ID
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for range 17 {
		if err := root.Mkdir(seg, 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := root.OpenRoot(seg)
		root.Close()
		if err != nil {
			t.Fatal(err)
		}
		root = next
		parts = append(parts, seg)
	}
	defer root.Close()
	if err := root.WriteFile("x.md", []byte("deep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return strings.Join(append(parts, "x.md"), "/")
}

// conflicted leaves agent b's directory with a text conflict on notes/a.md
// (lines 2-6) and a modify/delete conflict on d.md, and returns b's server
// and the conflict result.
func conflicted(t *testing.T, nb *notebook) (*agent, *mcpServer, result) {
	a, b := nb.agent("a"), nb.agent("b")
	sa, sb := a.serve(), b.serve()
	sa.pull()
	a.write("notes/a.md", "one\ntwo\nthree\n")
	a.write("d.md", "d\n")
	sa.commit("base")
	sb.pull()
	a.write("notes/a.md", "one\nTWO by a\nthree\n")
	os.Remove(filepath.Join(a.dir, "d.md"))
	sa.commit("a edits")
	b.write("notes/a.md", "one\nTWO by b\nthree\n")
	b.write("d.md", "d changed by b\n")
	return b, sb, sb.call(ToolCommitName, map[string]any{"message": "b edits"})
}

func rowMergeConflict(t *testing.T, nb *notebook, row diag.CatalogRow) {
	b, _, r := conflicted(t, nb)
	wantRow(t, r, row)
	if got := fileReasons(r); got["notes/a.md"] != "TEXT_CONFLICT" || got["d.md"] != "MODIFY_DELETE" {
		t.Fatalf("file reasons %v", got)
	}
	rs := fileRanges(r)
	if len(rs["notes/a.md"]) != 1 || rs["notes/a.md"][0] != [2]int{2, 6} || len(rs["d.md"]) != 0 {
		t.Fatalf("ranges %v", rs)
	}
	if !strings.Contains(r.text, "file: notes/a.md · TEXT_CONFLICT · lines 2-6\n") {
		t.Fatalf("text item:\n%s", r.text)
	}
	want := "one\n<<<<<<< local\nTWO by b\n=======\nTWO by a\n>>>>>>> remote\nthree\n"
	if got := b.read("notes/a.md"); got != want {
		t.Fatalf("conflict block:\n%s", got)
	}
	if b.read("d.md") != "d changed by b\n" {
		t.Fatal("the modified side of modify/delete was not kept")
	}
}

func rowUnresolvedMarkers(t *testing.T, nb *notebook, row diag.CatalogRow) {
	_, sb, _ := conflicted(t, nb)
	r := sb.call(ToolCommitName, map[string]any{"message": "unresolved"})
	wantRow(t, r, row)
	if got := fileReasons(r); got["notes/a.md"] != diag.FileConflictMarkers {
		t.Fatalf("file reasons %v", got)
	}
	if rs := fileRanges(r)["notes/a.md"]; len(rs) != 1 || rs[0] != [2]int{2, 6} {
		t.Fatalf("ranges %v", rs)
	}
}

func rowOutsideWritable(t *testing.T, nb *notebook, row diag.CatalogRow) {
	a := nb.agent("a")
	s := a.serve("--writable", "notes")
	s.pull()
	a.write("notes/ok.md", "allowed\n")
	a.write("other.md", "not allowed\n")
	r := s.call(ToolCommitName, map[string]any{"message": "m"})
	wantRow(t, r, row)
	if got := fileReasons(r); len(got) != 1 || got["other.md"] != diag.ReasonOutsideWritable {
		t.Fatalf("file reasons %v", got)
	}
	if _, err := os.Stat(filepath.Join(a.dir, "other.md")); !os.IsNotExist(err) {
		t.Fatalf("other.md was not reset to the accepted state (absent): %v", err)
	}
	if !strings.Contains(r.text, "\nwritable: notes") || r.s["writable"].([]any)[0] != "notes" {
		t.Fatalf("the writable set is not advertised:\n%s", r.text)
	}
}

func rowInsideReadOnly(t *testing.T, nb *notebook, row diag.CatalogRow) {
	owner := nb.agent("owner").serve()
	owner.pull()
	owner.a.write("docs/guide.md", "accepted\n")
	owner.commit("docs")
	a := nb.agent("a")
	s := a.serve("--read-only", "docs")
	s.pull()
	a.write("docs/guide.md", "vandalised\n")
	r := s.call(ToolCommitName, map[string]any{"message": "m"})
	wantRow(t, r, row)
	if got := fileReasons(r); len(got) != 1 || got["docs/guide.md"] != diag.ReasonInsideReadOnly {
		t.Fatalf("file reasons %v", got)
	}
	if a.read("docs/guide.md") != "accepted\n" {
		t.Fatal("docs/guide.md was not reset to the accepted content")
	}
}

func rowStoreUnreachable(t *testing.T, nb *notebook, row diag.CatalogRow) {
	s := nb.agent("a").serve()
	// A symlink loop where `current` lives: every read fails with ELOOP,
	// which is neither "absent" nor "forbidden".
	cur := filepath.Join(storeDir(nb), "current")
	if err := os.MkdirAll(filepath.Dir(cur), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("current", cur); err != nil {
		t.Fatal(err)
	}
	wantRow(t, s.call(ToolPullName, map[string]any{}), row)
}

func rowAccessDenied(t *testing.T, nb *notebook, row diag.CatalogRow) {
	a := nb.agent("a")
	s := a.serve()
	s.pull()
	a.write("a.md", "1\n")
	s.commit("first")
	immutable(t, filepath.Join(storeDir(nb), "packs"))
	a.write("a.md", "1\n2\n")
	wantRow(t, s.call(ToolCommitName, map[string]any{"message": "second"}), row)
}

func rowAcceptanceUnknown(t *testing.T, nb *notebook, row diag.CatalogRow) {
	// An ambiguous publication needs a store whose replace is lost in
	// flight and whose re-reads fail; the file store cannot be made to.
	t.Skip("needs scripted store faults: covered through MCP by server/mcpserver TestStoreFaultAcceptanceUnknown (engine over memstore.Mem)")
}

func rowIncompatibleStore(t *testing.T, nb *notebook, row diag.CatalogRow) {
	// The row is the store losing its guarantees when re-proved during a
	// session; at startup serve exits with the INCOMPATIBLE_STORE
	// diagnostic instead. The file store always keeps its guarantees, so
	// neither can be provoked through the binary; remote's probe tests
	// cover the detection.
	t.Skip("needs a store without conditional writes: covered through MCP by server/mcpserver TestStoreFaultIncompatibleStore (engine over memstore.Mem)")
}

func rowCorruptManifest(t *testing.T, nb *notebook, row diag.CatalogRow) {
	s := nb.agent("a").serve()
	s.pull()
	cur := filepath.Join(storeDir(nb), "current")
	if err := os.WriteFile(cur, []byte(`{"version":1,"generation":`), 0o644); err != nil {
		t.Fatal(err)
	}
	wantRow(t, s.call(ToolPullName, map[string]any{}), row)
}

// rowGenerationRegressed: `current` deleted after this host saw
// generation 1 (cli_generation_test.go covers a restored older copy).
func rowGenerationRegressed(t *testing.T, nb *notebook, row diag.CatalogRow) {
	s := nb.agent("a").serve()
	s.pull()
	s.a.write("notes/a.md", "content\n")
	s.commit("content")
	if err := os.Remove(filepath.Join(storeDir(nb), "current")); err != nil {
		t.Fatal(err)
	}
	wantRow(t, s.call(ToolPullName, map[string]any{}), row)
}

// published makes one accepted commit by a throw-away agent.
func published(t *testing.T, nb *notebook) {
	o := nb.agent("owner").serve()
	o.pull()
	o.a.write("notes/a.md", "content\n")
	o.commit("content")
}

func rowCorruptPack(t *testing.T, nb *notebook, row diag.CatalogRow) {
	published(t, nb)
	for _, p := range packFiles(t, storeDir(nb)) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)/2] ^= 0xff
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wantRow(t, nb.agent("fresh").serve().call(ToolPullName, map[string]any{}), row)
}

func rowMissingPack(t *testing.T, nb *notebook, row diag.CatalogRow) {
	published(t, nb)
	for _, p := range packFiles(t, storeDir(nb)) {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	wantRow(t, nb.agent("fresh").serve().call(ToolPullName, map[string]any{}), row)
}

func rowCacheCorrupt(t *testing.T, nb *notebook, row diag.CatalogRow) {
	a, b := nb.agent("a"), nb.agent("b")
	sa, sb := a.serve(), b.serve()
	sa.pull()
	a.write("notes/a.md", "one\ntwo\nthree\nfour\nfive\n")
	sa.commit("base")
	sb.pull()
	// Damage the objects in every cached pack of b while no server has it
	// open, keeping each pack's checksum valid so the cache trusts it; then
	// make b need them: a text merge of a file both sides changed reads the
	// base from the cache. The engine drops a damaged pack and fetches it
	// again, so the cache is made unrepairable: the damaged packs cannot be
	// removed.
	sb.close()
	var damaged []string
	_ = filepath.Walk(filepath.Join(b.priv, "stores"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() && strings.HasSuffix(p, ".pack") {
			if bs, err := os.ReadFile(p); err == nil && os.WriteFile(p, damageRecords(bs), 0o644) == nil {
				damaged = append(damaged, p)
			}
		}
		return nil
	})
	if len(damaged) == 0 {
		t.Fatal("no cached packs found under the private root")
	}
	immutable(t, damaged...)
	sb = b.serve()
	a.write("notes/a.md", "one\ntwo\nthree\nfour\nFIVE\n")
	sa.commit("a")
	b.write("notes/a.md", "ONE\ntwo\nthree\nfour\nfive\n")
	wantRow(t, sb.call(ToolCommitName, map[string]any{"message": "b"}), row)
}

// damageRecords flips the first stored byte of every object record of a
// pack (format v1, docs/format.md) and rewrites the trailer checksum, so
// the pack loads but its objects no longer match their IDs.
func damageRecords(p []byte) []byte {
	const header, record, trailer = 24, 42, 48
	end := int(binary.LittleEndian.Uint64(p[len(p)-trailer:]))
	for off := header; off+record <= end; {
		n := int(binary.LittleEndian.Uint32(p[off+38:]))
		if n > 0 {
			p[off+record] ^= 0xff
		}
		off += record + n
	}
	sum := blake3.Sum256(p[:len(p)-32])
	copy(p[len(p)-32:], sum[:])
	return p
}

func rowLocalIO(t *testing.T, nb *notebook, row diag.CatalogRow) {
	a := nb.agent("a")
	s := a.serve()
	s.pull()
	// The private state refuses every write: the call fails before it
	// touches the notebook directory, with a classified cause.
	immutable(t, a.priv)
	a.write("a.md", "x\n")
	r := s.call(ToolCommitName, map[string]any{"message": "m"})
	wantRow(t, r, row)
	if r.str("detail") != diag.DetailPermission {
		t.Fatalf("detail %q, want %q", r.str("detail"), diag.DetailPermission)
	}
	if !strings.Contains(r.text, "\ndetail: "+diag.DetailPermission+"\n") {
		t.Fatalf("text item lacks the detail:\n%s", r.text)
	}
}

func rowInternal(t *testing.T, nb *notebook, row diag.CatalogRow) {
	// An unexpected failure has no reliable trigger from outside the
	// process; the adapter's own tests (server/mcpserver) prove that a
	// non-domain error or a panic becomes exactly this row.
	t.Skip("no external trigger: covered by server/mcpserver TestUnexpectedFailuresStayInEnvelope")
}

func rowResynchronized(t *testing.T, nb *notebook, row diag.CatalogRow) {
	// RESYNCHRONIZED needs a failure the immediate resynchronisation does
	// not meet again (a cancelled context, a transient I/O error). A
	// cancelled MCP request is a protocol error by design, and an on-disk
	// fault persists into the resync (that is RECOVERY_PENDING below).
	t.Skip("needs a transient fault: covered through MCP by server/mcpserver TestTransientRewriteFaultResynchronizes")
}

// rowRecoveryPending: a pull whose rewrite of the directory fails midway
// (a file the OS refuses to replace) cannot resynchronise either; once the
// fault is gone the next call recovers.
func rowRecoveryPending(t *testing.T, nb *notebook, row diag.CatalogRow) {
	b, sb, r := failedRewrite(t, nb)
	wantRow(t, r, row)
	rec := r.s["recovery"].(map[string]any)
	if rec["resynchronized"] != false || rec["remoteAccepted"] == "" {
		t.Fatalf("recovery report %v", rec)
	}
	if !strings.Contains(r.text, "\nrecovery: stage ") {
		t.Fatalf("text item lacks the recovery report:\n%s", r.text)
	}
	exec.Command("chattr", "-R", "-i", b.dir).Run()
	sb.pull()
	if b.read("x/1.md") != "1 changed\n" || b.read("x/2.md") != "2 changed\n" {
		t.Fatalf("not recovered: %q", b.files())
	}
}

// failedRewrite makes a pull fail after it began rewriting the directory
// and returns the result; the recovery report must be present.
func failedRewrite(t *testing.T, nb *notebook) (*agent, *mcpServer, result) {
	t.Helper()
	a, b := nb.agent("a"), nb.agent("b")
	sa, sb := a.serve(), b.serve()
	sa.pull()
	a.write("x/1.md", "1\n")
	a.write("x/2.md", "2\n")
	sa.commit("base")
	sb.pull()
	a.write("x/1.md", "1 changed\n")
	a.write("x/2.md", "2 changed\n")
	sa.commit("change")
	immutable(t, filepath.Join(b.dir, "x", "2.md"))
	r := sb.call(ToolPullName, map[string]any{})
	if r.str("code") != string(diag.CodeRecoveryFailure) {
		t.Fatalf("want RECOVERY_FAILURE, got %s", r.text)
	}
	rec, _ := r.s["recovery"].(map[string]any)
	if rec == nil || rec["stage"] == "" || rec["remoteAccepted"] == nil {
		t.Fatalf("recovery report missing: %s", r.raw)
	}
	return b, sb, r
}
