package secrets

import (
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/server/secrets/secretstest"
)

func text(lines ...string) []byte { return []byte(strings.Join(lines, "\n") + "\n") }

// A credential completed across two commits is found by the second,
// whichever half came first; one accepted whole earlier does not block a
// commit that adds unrelated lines around or inside its context.
func TestCredentialCompletedAcrossCommits(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		cs := secretstest.Cases(seed)
		aws, pem := cs[0], cs[len(cs)-1]
		if aws.Rule != "aws-access-key" || pem.Rule != "pem-private-key" {
			t.Fatal("secretstest.Cases changed order")
		}
		idLine, keyLine := aws.Lines[1], aws.Lines[2]
		cases := []struct {
			name       string
			old, new   []byte
			start, end int // 0: nothing found
		}{
			{"key ID first, secret next", text("# creds", idLine), text("# creds", idLine, keyLine), 2, 3},
			{"secret first, key ID next", text("# creds", keyLine), text("# creds", keyLine, idLine), 2, 3},
			{"key ID first, secret appended mid-file", text(idLine, "x", "y", "z"), text(idLine, keyLine, "x", "y", "z"), 1, 2},
			{"PEM END added last", text(append([]string{"note"}, pem.Lines[:len(pem.Lines)-1]...)...), text(append([]string{"note"}, pem.Lines...)...), 2, len(pem.Lines) + 1},
			{"PEM body added between", text("note", pem.Lines[0], pem.Lines[len(pem.Lines)-1]), text(append([]string{"note"}, pem.Lines...)...), 2, len(pem.Lines) + 1},
			{"accepted pair, a line added below", text(idLine, keyLine), text(idLine, keyLine, "an unrelated line"), 0, 0},
			{"accepted pair, a line added between", text(idLine, keyLine), text(idLine, "an unrelated line", keyLine), 0, 0},
			{"accepted PEM, lines added around", text(pem.Lines...), text(append(append([]string{"above"}, pem.Lines...), "below")...), 0, 0},
			{"key ID alone", nil, text("x", idLine, "y"), 0, 0},
		}
		for _, c := range cases {
			got := Added(c.old, c.new)
			if c.start == 0 {
				if len(got) != 0 {
					t.Errorf("seed %d, %s: found %v", seed, c.name, got)
				}
				continue
			}
			if len(got) != 1 || got[0].Start != c.start || got[0].End != c.end {
				t.Errorf("seed %d, %s: found %v, want lines %d-%d", seed, c.name, got, c.start, c.end)
			}
		}
	}
}

// A name with a credential is reported with the credential replaced, and
// the replacement holds nothing of it.
func TestRedactNames(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		for _, c := range secretstest.Cases(seed) {
			if len(c.Lines) != 1 || strings.ContainsAny(c.Secret, "/") {
				continue // AWS pairs and PEM blocks span lines; a slash cannot be in a name
			}
			for _, name := range []string{c.Secret + ".md", "copy of " + c.Secret + " (2).txt"} {
				want := strings.Replace(name, c.Secret, Placeholder, 1)
				if got, found := Redact(name); !found || got != want {
					t.Errorf("seed %d, %s: Redact = %q, %v", seed, c.Rule, got, found)
				}
			}
		}
	}
	for _, name := range []string{"README.md", "ghp_short.md", "AKIAIOSFODNN7EXAMPLE.md", "sk-proj-notes.md", "2026-12-06 standup.md"} {
		if got, found := Redact(name); found || got != name {
			t.Errorf("Redact(%q) = %q, %v", name, got, found)
		}
	}
}
