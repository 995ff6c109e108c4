package server

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/filestore"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/secrets/secretstest"
)

// A commit adding a credential of any recognised format is refused with
// INVALID_FILES/SECRET and the lines; nothing is published or changed, and
// the secret is in no error field, log record, store object or file of P.
func TestCommitRefusesSecrets(t *testing.T) {
	for i, c := range secretstest.Cases(11) {
		t.Run(fmt.Sprintf("%d-%s", i, c.Rule), func(t *testing.T) {
			storeDir := t.TempDir()
			store, err := filestore.New(storeDir)
			if err != nil {
				t.Fatal(err)
			}
			var logs bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			a := newAgent(t, store, func(cfg *Config) { cfg.Logger = logger })
			a.pull()
			a.write("notes.md", "# notes\n\nfirst\n")
			a.commit("start")
			before, _, err := store.Get(context.Background(), remote.CurrentKey)
			if err != nil || len(before) == 0 {
				t.Fatalf("no current: %v", err)
			}
			content := "# notes\n\nfirst\n" + strings.Join(c.Lines, "\n") + "\n"
			a.write("notes.md", content)
			a.write("other.md", "fine\n")
			_, err = a.e.Commit(context.Background(), "", "oops")
			de := domainErr(t, err, diag.CodeInvalidContent, diag.ReasonInvalidFiles)
			want := []string{fmt.Sprintf("notes.md:SECRET:%d-%d", 3+c.Start, 3+c.End)}
			if got := fileReasons(de); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("files %v, want %v", got, want)
			}
			if de.Action != diag.ActionFixFiles {
				t.Fatalf("action %s", de.Action)
			}
			after, _, _ := store.Get(context.Background(), remote.CurrentKey)
			if !bytes.Equal(before, after) {
				t.Fatal("something was published")
			}
			if a.read("notes.md") != content || a.read("other.md") != "fine\n" {
				t.Fatal("L was changed")
			}
			text := fmt.Sprintf("%v %+v", de, de)
			for _, where := range []struct{ name, text string }{{"error", text}, {"log", logs.String()}} {
				if strings.Contains(where.text, c.Secret) {
					t.Fatalf("the secret is in the %s", where.name)
				}
			}
			if !strings.Contains(logs.String(), c.Rule) {
				t.Fatalf("the log does not name the rule: %s", logs.String())
			}
			for _, root := range []string{storeDir, a.e.private} {
				assertNotInTree(t, root, c.Secret)
			}
			// Removing the lines lets the commit through.
			a.write("notes.md", "# notes\n\nfirst\nredacted\n")
			a.commit("redacted")
		})
	}
}

func assertNotInTree(t *testing.T, root, secret string) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("the secret is in %s", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Pull never refuses a file holding a secret (published by a client with
// --secrets allow), and editing other lines of it commits.
func TestSecretsAlreadyPublished(t *testing.T) {
	store := memstore.New()
	c := secretstest.Cases(12)[2]
	loose := newAgent(t, store, func(cfg *Config) { cfg.AllowSecrets = true })
	loose.pull()
	loose.write("cfg.md", "x\n"+c.Lines[0]+"\ny\n")
	loose.commit("allowed")
	a := newAgent(t, store)
	a.pull()
	if !strings.Contains(a.read("cfg.md"), c.Secret) {
		t.Fatal("pull did not write the file")
	}
	a.write("cfg.md", "x\n"+c.Lines[0]+"\ny\nz\n")
	a.commit("edit around it")
	// A second copy of the line is added, and refused.
	a.write("cfg.md", "x\n"+c.Lines[0]+"\ny\nz\n"+c.Lines[0]+"\n")
	_, err := a.e.Commit(context.Background(), "", "copy")
	de := domainErr(t, err, diag.CodeInvalidContent, diag.ReasonInvalidFiles)
	if got := fileReasons(de); fmt.Sprint(got) != "[cfg.md:SECRET:5-5]" {
		t.Fatalf("files %v", got)
	}
}
