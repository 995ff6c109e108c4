package server

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/rules"
)

// Every file that breaks the content rules is named with its reason, in
// one error, and neither pull nor commit publishes or deletes anything.
func TestBadContentRefused(t *testing.T) {
	store := memstore.New()
	a := newAgent(t, store)
	a.pull()
	a.write("good.md", "fine\n")
	a.commit("base")
	published := store.Calls(memstore.OpPut)

	a.write("good.md", "fine\nedited\n") // a local edit that must survive
	a.write("bad-utf8.md", "caf\xe9\n")
	a.write("has-nul.md", "a\x00b")
	a.write("sub/CON.txt", "device\n")
	a.write("trailing-dot.", "x")
	a.write("nul.md", "a Windows device name\n")
	a.write("Case.md", "1")
	a.write("case.md", "2")
	a.write("\u0065\u0301.md", "not NFC") // e + combining acute
	if err := os.Symlink("good.md", a.path("inside-link")); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	if err := os.Symlink(outside, a.path("escape")); err != nil {
		t.Fatal(err)
	}
	fifo := makeFIFO(t, a.path("pipe"))
	want := []string{
		"Case.md:NAME_COLLISION", "bad-utf8.md:INVALID_UTF8", "case.md:NAME_COLLISION",
		"e\u0301.md:INVALID_NAME", "escape:SYMLINK", "inside-link:SYMLINK", "has-nul.md:NUL_BYTE", "nul.md:INVALID_NAME",
		"sub/CON.txt:INVALID_NAME", "trailing-dot.:INVALID_NAME",
	}
	if fifo {
		want = append(want, "pipe:SPECIAL_FILE")
	}
	sort.Strings(want)
	before := a.files()
	for _, op := range []string{"commit", "pull"} {
		var err error
		if op == "commit" {
			_, err = a.e.Commit(context.Background(), "", "bad")
		} else {
			_, err = a.e.Pull(context.Background(), "")
		}
		de := domainErr(t, err, diag.CodeInvalidContent, diag.ReasonInvalidFiles)
		if got := fileReasons(de); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: files\n got  %v\n want %v", op, got, want)
		}
		if de.Action != diag.ActionFixFiles || de.Retryable {
			t.Fatalf("%s: action %s retryable %v", op, de.Action, de.Retryable)
		}
	}
	if store.Calls(memstore.OpPut) != published {
		t.Fatalf("a refused commit uploaded a pack")
	}
	equalMaps(t, "files after refusals", a.files(), before)
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("something was written through the escaping symlink")
	}
}

// Bad requests are refused before anything is touched.
func TestBadRequests(t *testing.T) {
	store := memstore.New()
	a := newAgent(t, store)
	ctx := context.Background()

	_, err := a.e.Commit(ctx, "", "first")
	domainErr(t, err, diag.CodeInvalidRequest, diag.ReasonNotPulled)

	a.pull()
	a.write("f.md", "x\n")
	for _, msg := range []string{"", "  \t\n", "\u3000\u00a0"} {
		_, err := a.e.Commit(ctx, "", msg)
		domainErr(t, err, diag.CodeInvalidRequest, diag.ReasonBlankMessage)
	}
	for _, msg := range []string{"a\x00b", strings.Repeat("m", rules.MaxMessageBytes+1), "bad \xff utf8"} {
		_, err := a.e.Commit(ctx, "", msg)
		domainErr(t, err, diag.CodeInvalidRequest, diag.ReasonInvalidArgument)
	}
	if _, err := a.e.Commit(ctx, "", strings.Repeat("m", rules.MaxMessageBytes)); err != nil {
		t.Fatalf("a message of exactly the limit: %v", err)
	}

	for _, p := range []string{"/", "../..", filepath.Join(a.ws, "..", "elsewhere"), "../../x", "~/"} {
		_, err := a.e.Pull(ctx, p)
		domainErr(t, err, diag.CodeInvalidRequest, diag.ReasonPathOutsideRoot)
	}
	// A symlink inside the workspace that leads outside it.
	if err := os.Symlink(t.TempDir(), filepath.Join(a.ws, "out")); err != nil {
		t.Fatal(err)
	}
	_, err = a.e.Pull(ctx, filepath.Join(a.ws, "out"))
	domainErr(t, err, diag.CodeInvalidRequest, diag.ReasonPathOutsideRoot)
	_, err = a.e.Pull(ctx, filepath.Join(a.ws, "out", "deeper"))
	domainErr(t, err, diag.CodeInvalidRequest, diag.ReasonPathOutsideRoot)

	_, err = a.e.Pull(ctx, a.path("f.md"))
	domainErr(t, err, diag.CodeInvalidRequest, diag.ReasonPathNotDirectory)
	for _, p := range []string{"a\x00b", strings.Repeat("x/", 2100), "bad\xff"} {
		_, err := a.e.Pull(ctx, p)
		domainErr(t, err, diag.CodeInvalidRequest, diag.ReasonInvalidArgument)
	}
}

// Committing a directory that was pulled and then removed is refused: it
// would otherwise publish the deletion of every file.
func TestCommitRemovedDirectory(t *testing.T) {
	a := newAgent(t, memstore.New())
	a.pull()
	a.write("f.md", "x\n")
	a.commit("seed")
	if err := os.RemoveAll(a.dir); err != nil {
		t.Fatal(err)
	}
	_, err := a.e.Commit(context.Background(), "", "everything gone")
	domainErr(t, err, diag.CodeInvalidRequest, diag.ReasonPathNotDirectory)
}
