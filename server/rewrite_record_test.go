package server

import (
	"context"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/rewrite"
)

func tenLines(repl map[int]string) string {
	var b strings.Builder
	for i := 1; i <= 10; i++ {
		if r, ok := repl[i]; ok {
			b.WriteString(r + "\n")
		} else {
			b.WriteString("l" + string(rune('0'+i%10)) + "\n")
		}
	}
	return b.String()
}

// A resynchronisation that starts from an interrupted rewrite's record and
// fails in its own rewrite resynchronises at once against its own, newer
// record too: the files it already wrote are not taken for local edits when
// the other writer has meanwhile edited the lines next to them.
func TestResyncAfterItsOwnRewriteFailsUsesItsOwnRecord(t *testing.T) {
	store := memstore.New()
	a, b := newAgent(t, store), newAgent(t, store)
	a.pull()
	for _, f := range []string{"f.md", "g.md", "h.md"} {
		a.write(f, tenLines(nil))
	}
	a.commit("base")
	b.pull()
	edits := map[int]string{3: "a three"}
	for _, f := range []string{"f.md", "g.md", "h.md"} {
		a.write(f, tenLines(edits))
	}
	a.commit("a1")
	// b's pull is interrupted in its rewrite, and so is the
	// resynchronisation it runs at once: a flag and record stand.
	failAt(t, FailMidRewrite, 2)
	if _, err := b.e.Pull(context.Background(), ""); err == nil {
		t.Fatal("want RECOVERY_FAILURE")
	}
	edits[4] = "a four"
	for _, f := range []string{"f.md", "g.md", "h.md"} {
		a.write(f, tenLines(edits))
	}
	a.commit("a2")
	// The next pull starts from that record, fails in its own rewrite, and
	// at that moment a edits next to its lines again.
	fired := false
	rewrite.SetFailHook(func(n string) error {
		if n != FailMidRewrite || fired {
			return nil
		}
		fired = true
		edits[5] = "a five"
		for _, f := range []string{"f.md", "g.md", "h.md"} {
			a.write(f, tenLines(edits))
		}
		a.commit("a3")
		return errInjected
	})
	_, err := b.e.Pull(context.Background(), "")
	rewrite.SetFailHook(nil)
	if de := domainErr(t, err, diag.CodeRecoveryFailure, diag.ReasonResynchronized); !de.Recovery.Resynchronized {
		t.Fatalf("%+v", de)
	}
	b.pull()
	for _, f := range []string{"f.md", "g.md", "h.md"} {
		if got := b.read(f); got != tenLines(edits) {
			t.Fatalf("%s = %q", f, got)
		}
	}
}
