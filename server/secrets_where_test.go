package server

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/filestore"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/secrets/secretstest"
)

// secretsAgent is an agent on a file store whose log is kept at debug
// level, after a first commit.
func secretsAgent(t *testing.T) (*agent, remote.Store, string, *bytes.Buffer) {
	t.Helper()
	storeDir := t.TempDir()
	store, err := filestore.New(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	logs := &bytes.Buffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	a := newAgent(t, store, func(cfg *Config) { cfg.Logger = logger })
	a.pull()
	a.write("notes.md", "# notes\n")
	a.commit("start")
	return a, store, storeDir, logs
}

// refusedWithout checks that nothing was published and that the secret is
// in no field of the error, no log record, no store object and no file of P.
func refusedWithout(t *testing.T, a *agent, store remote.Store, storeDir string, logs *bytes.Buffer, before []byte, de *diag.Error, secret string) {
	t.Helper()
	after, _, _ := store.Get(context.Background(), remote.CurrentKey)
	if !bytes.Equal(before, after) {
		t.Fatal("something was published")
	}
	if text := fmt.Sprintf("%v %+v", de, de); strings.Contains(text, secret) {
		t.Fatal("the secret is in the error")
	}
	if strings.Contains(logs.String(), secret) {
		t.Fatal("the secret is in the log")
	}
	for _, root := range []string{storeDir, a.e.private} {
		assertNotInTree(t, root, secret)
	}
}

func TestCommitRefusesSecretInMessage(t *testing.T) {
	for i, c := range secretstest.Cases(21) {
		t.Run(fmt.Sprintf("%d-%s", i, c.Rule), func(t *testing.T) {
			a, store, storeDir, logs := secretsAgent(t)
			before, _, _ := store.Get(context.Background(), remote.CurrentKey)
			a.write("notes.md", "# notes\nan edit\n")
			_, err := a.e.Commit(context.Background(), "", "debugging, with\n"+strings.Join(c.Lines, "\n"))
			de := domainErr(t, err, diag.CodeInvalidContent, diag.ReasonSecretInMessage)
			if len(de.Files) != 0 || de.Action != diag.ActionFixRequest || de.Retryable {
				t.Fatalf("files %v, action %s, retryable %t", de.Files, de.Action, de.Retryable)
			}
			// The message says where: its lines (the first is "debugging, with").
			where := fmt.Sprintf("line %d;", 1+c.Start)
			if c.Start != c.End {
				where = fmt.Sprintf("lines %d-%d;", 1+c.Start, 1+c.End)
			}
			if !strings.Contains(de.Message, where) {
				t.Fatalf("message %q does not say %q", de.Message, where)
			}
			refusedWithout(t, a, store, storeDir, logs, before, de, c.Secret)
			a.commit("the same edit, a clean message")
		})
	}
}

// A new file or directory whose name holds a credential is refused and
// reported with the credential replaced; a directory accepted earlier
// (published with --secrets allow) does not block new files under it.
func TestCommitRefusesSecretInName(t *testing.T) {
	tok := secretstest.Cases(22)[2].Secret // a GitHub token
	a, store, storeDir, logs := secretsAgent(t)
	before, _, _ := store.Get(context.Background(), remote.CurrentKey)
	a.write(tok+".md", "plain\n")
	a.write("keys/"+tok+"/a.md", "plain\n")
	a.write("keys/"+tok+"/b.md", "plain\n")
	a.write("fine.md", "plain\n")
	_, err := a.e.Commit(context.Background(), "", "names")
	de := domainErr(t, err, diag.CodeInvalidContent, diag.ReasonInvalidFiles)
	want := "[[secret].md:SECRET_IN_NAME keys/[secret]/a.md:SECRET_IN_NAME keys/[secret]/b.md:SECRET_IN_NAME]"
	if got := fmt.Sprint(fileReasons(de)); got != want {
		t.Fatalf("files %s, want %s", got, want)
	}
	refusedWithout(t, a, store, storeDir, logs, before, de, tok)

	// Published by a client that allows secrets, the directory is the
	// notebook's: adding a file under it is not refused.
	a.remove(tok + ".md")
	a.remove("keys/" + tok + "/b.md")
	a.e.env.Secrets = false
	a.commit("allowed")
	a.e.env.Secrets = true
	a.write("keys/"+tok+"/c.md", "plain\n")
	a.commit("a new file in an accepted directory")
}

// The halves of a credential committed one after the other: the second
// commit is refused, naming the lines of both.
func TestCommitRefusesCredentialCompletedAcrossCommits(t *testing.T) {
	cs := secretstest.Cases(23)
	aws, pem := cs[0], cs[len(cs)-1]
	t.Run("aws key ID, then its secret", func(t *testing.T) {
		a, store, storeDir, logs := secretsAgent(t)
		a.write("notes.md", "# notes\n"+aws.Lines[1]+"\n")
		a.commit("the key ID alone is not a secret")
		before, _, _ := store.Get(context.Background(), remote.CurrentKey)
		a.write("notes.md", "# notes\n"+aws.Lines[1]+"\n"+aws.Lines[2]+"\n")
		_, err := a.e.Commit(context.Background(), "", "and now the secret")
		de := domainErr(t, err, diag.CodeInvalidContent, diag.ReasonInvalidFiles)
		if got := fmt.Sprint(fileReasons(de)); got != "[notes.md:SECRET:2-3]" {
			t.Fatalf("files %s", got)
		}
		refusedWithout(t, a, store, storeDir, logs, before, de, aws.Secret)
	})
	t.Run("pem BEGIN and body, then END", func(t *testing.T) {
		// The body went out with the first commit (a block without its END
		// line is not a key); the second is refused and the store keeps
		// no complete block.
		a, store, _, _ := secretsAgent(t)
		head := strings.Join(pem.Lines[:len(pem.Lines)-1], "\n")
		a.write("notes.md", "# notes\n"+head+"\n")
		a.commit("an unterminated block is not a key")
		before, _, _ := store.Get(context.Background(), remote.CurrentKey)
		a.write("notes.md", "# notes\n"+head+"\n"+pem.Lines[len(pem.Lines)-1]+"\n")
		_, err := a.e.Commit(context.Background(), "", "and now the END line")
		de := domainErr(t, err, diag.CodeInvalidContent, diag.ReasonInvalidFiles)
		if got := fmt.Sprint(fileReasons(de)); got != fmt.Sprintf("[notes.md:SECRET:2-%d]", len(pem.Lines)+1) {
			t.Fatalf("files %s", got)
		}
		after, _, _ := store.Get(context.Background(), remote.CurrentKey)
		if !bytes.Equal(before, after) {
			t.Fatal("something was published")
		}
	})
}
