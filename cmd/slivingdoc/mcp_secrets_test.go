//go:build unix

package main

// Secrets everywhere they hide, through MCP against the built binary: the
// commit message, a new file or directory name, and a credential completed
// across two commits (an AWS key ID, then its secret; a PEM block's BEGIN
// and body, then its END). Each is refused with where it is, never the
// secret: not in the result (structured or text), not on stderr at debug
// level, not in the store, not in the private root.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/secrets/secretstest"
)

func init() {
	rowTests["INVALID_CONTENT/SECRET_IN_MESSAGE"] = rowSecretInMessage
}

// secretsServer is a server at debug level whose every output is checked
// for secret (call checks results; close checks stderr).
func secretsServer(t *testing.T, nb *notebook, secret string) (*agent, *mcpServer) {
	t.Helper()
	a := nb.agent("a")
	a.env = append(a.env, "LOG_LEVEL=debug")
	s := a.serve()
	s.forbidden = append(s.forbidden, secret)
	s.pull()
	a.write("notes.md", "# notes\n")
	s.commit("start")
	return a, s
}

// noSecretStored walks the store, the private root and the user cache
// directory for secret.
func noSecretStored(t *testing.T, a *agent, secret string) {
	t.Helper()
	for _, root := range []string{storeDir(a.nb), a.priv, filepath.Join(filepath.Dir(a.dir), "xdg-cache")} {
		if _, err := os.Stat(root); os.IsNotExist(err) {
			continue
		}
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if strings.Contains(d.Name(), secret) {
				t.Errorf("a name under %s holds the secret", root)
			}
			if d.Type().IsRegular() {
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				if strings.Contains(string(b), secret) {
					t.Errorf("%s holds the secret", p)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func rowSecretInMessage(t *testing.T, nb *notebook, row diag.CatalogRow) {
	c := secretstest.Cases(31)[2] // a GitHub token
	a, s := secretsServer(t, nb, c.Secret)
	a.write("notes.md", "# notes\nan edit\n")
	r := s.call(ToolCommitName, map[string]any{"message": "debug with " + c.Lines[0]})
	wantRow(t, r, row)
	if len(r.files()) != 0 {
		t.Fatalf("files: %s", r.raw)
	}
	s.close() // stderr checked
	noSecretStored(t, a, c.Secret)
}

func TestMCPSecretsWhereTheyHide(t *testing.T) {
	nb := newNotebook(t, backends[0])
	cs := secretstest.Cases(32)
	aws, gh, pem := cs[0], cs[2], cs[len(cs)-1]

	t.Run("message, each format", func(t *testing.T) {
		for _, c := range cs {
			a, s := secretsServer(t, nb, c.Secret)
			a.write("notes.md", "# notes\nedit for "+c.Rule+"\n")
			r := s.call(ToolCommitName, map[string]any{"message": "notes\n" + strings.Join(c.Lines, "\n")})
			wantError(t, r, "INVALID_CONTENT", "SECRET_IN_MESSAGE", "FIX_REQUEST", false)
			s.close()
			noSecretStored(t, a, c.Secret)
		}
	})

	t.Run("file and directory names", func(t *testing.T) {
		a, s := secretsServer(t, nb, gh.Secret)
		a.write(gh.Secret+".md", "plain\n")
		a.write("keys/"+gh.Secret+"/a.md", "plain\n")
		r := s.call(ToolCommitName, map[string]any{"message": "names"})
		wantError(t, r, "INVALID_CONTENT", "INVALID_FILES", "FIX_FILES", false)
		got := fileReasons(r)
		if len(got) != 2 || got["[secret].md"] != "SECRET_IN_NAME" || got["keys/[secret]/a.md"] != "SECRET_IN_NAME" {
			t.Fatalf("files %v", got)
		}
		s.close()
		noSecretStored(t, a, gh.Secret)
	})

	t.Run("aws key ID, then its secret", func(t *testing.T) {
		a, s := secretsServer(t, nb, aws.Secret)
		a.write("creds.md", aws.Lines[0]+"\n"+aws.Lines[1]+"\n")
		s.commit("the key ID alone")
		a.write("creds.md", aws.Lines[0]+"\n"+aws.Lines[1]+"\n"+aws.Lines[2]+"\n")
		r := s.call(ToolCommitName, map[string]any{"message": "and its secret"})
		wantError(t, r, "INVALID_CONTENT", "INVALID_FILES", "FIX_FILES", false)
		if got := fileRanges(r)["creds.md"]; len(got) != 1 || got[0] != [2]int{2, 3} || fileReasons(r)["creds.md"] != "SECRET" {
			t.Fatalf("files %s", r.raw)
		}
		s.close()
		noSecretStored(t, a, aws.Secret)
	})

	t.Run("pem BEGIN and body, then END", func(t *testing.T) {
		a, s := secretsServer(t, nb, "-----END RSA PRIVATE KEY-----")
		head := strings.Join(pem.Lines[:len(pem.Lines)-1], "\n") + "\n"
		a.write("key.md", head)
		s.commit("an unterminated block")
		a.write("key.md", head+pem.Lines[len(pem.Lines)-1]+"\n")
		r := s.call(ToolCommitName, map[string]any{"message": "the END line"})
		wantError(t, r, "INVALID_CONTENT", "INVALID_FILES", "FIX_FILES", false)
		if got := fileRanges(r)["key.md"]; len(got) != 1 || got[0] != [2]int{1, len(pem.Lines)} {
			t.Fatalf("files %s", r.raw)
		}
		s.close()
		// The store holds no complete block: the END line never went out.
		noSecretStored(t, a, "-----END RSA PRIVATE KEY-----")
	})

	t.Run("accepted earlier, unrelated commits pass", func(t *testing.T) {
		a := nb.agent("loose")
		loose := a.serve("--secrets", "allow")
		loose.pull()
		a.write("creds.md", strings.Join(aws.Lines, "\n")+"\n")
		loose.commit("published with --secrets allow")
		loose.close()
		b, s := secretsServer(t, nb, "never")
		b.write("creds.md", strings.Join(aws.Lines, "\n")+"\nrotated next week\n")
		s.commit("a line below an accepted pair")
		b.write("notes.md", "# notes\nother work\n")
		s.commit("another file")
	})
}

// The CLI refuses the same way (one engine), and echoes nothing: not on
// stdout, not on stderr at debug level, not in `log` afterwards.
func TestCLISecretInMessageAndName(t *testing.T) {
	gh := secretstest.Cases(33)[2]
	a := newNotebook(t, backends[0]).agent("cli")
	a.pull()
	a.write("notes.md", "an edit\n")
	debug := []string{"LOG_LEVEL=debug"}
	o := a.runEnv(debug, "commit", a.dir, "-m", "token "+gh.Secret)
	if rep := mustFail(t, o); rep.code != "INVALID_CONTENT" || rep.reason != "SECRET_IN_MESSAGE" {
		t.Fatalf("%s", o)
	}
	a.write(gh.Secret+".md", "plain\n")
	o2 := a.runEnv(debug, "commit", a.dir, "-m", "a name")
	if rep := mustFail(t, o2); rep.reason != "INVALID_FILES" || !strings.Contains(o2.stdout, "[secret].md · SECRET_IN_NAME") {
		t.Fatalf("%s", o2)
	}
	os.Remove(filepath.Join(a.dir, gh.Secret+".md"))
	a.commit("clean")
	o3 := a.run("log", "-p")
	if o3.code != 0 || !strings.Contains(o3.stdout, "clean") {
		t.Fatalf("%s", o3)
	}
	for _, o := range []outcome{o, o2, o3} {
		if strings.Contains(o.stdout+o.stderr, gh.Secret) {
			t.Fatalf("the secret is echoed:\n%s", o)
		}
	}
	noSecretStored(t, a, gh.Secret)
}
