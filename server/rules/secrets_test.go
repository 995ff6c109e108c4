package rules

import (
	"bytes"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/merge"
	"github.com/slivingdoc/slivingdoc/server/secrets"
	"github.com/slivingdoc/slivingdoc/server/secrets/secretstest"
)

// contents is a content-addressed set of files for the check's funcs.
type contents map[cas.ID][]byte

func (cs contents) add(s string) cas.ID {
	id := cas.Sum([]byte(s))
	cs[id] = []byte(s)
	return id
}

func (cs contents) load(id cas.ID) ([]byte, error) {
	if c, ok := cs[id]; ok {
		return c, nil
	}
	return nil, errors.New("not loaded: " + id.String())
}

// Only what a commit adds is refused: a credential A already holds, a
// removed file and an ignored one are not; a new file's lines are listed
// as ranges, and the log names the file and lines but never the secret.
func TestSecretsOnlyWhatTheCommitAdds(t *testing.T) {
	c := secretstest.Cases(7)[0]
	secret := strings.Join(c.Lines, "\n") + "\n"
	cs := contents{}
	oldWithSecret := cs.add("# keys\n" + secret)
	edited := cs.add("# keys\n" + secret + "one more line\n")
	added := cs.add("intro\n" + secret)
	ignored := cs.add(secret)
	var logs bytes.Buffer
	found, err := Secrets(Changes{
		Files: map[string]cas.ID{
			"kept.md":    edited,
			"new.md":     added,
			"removed.md": {},
			"ignored.md": ignored,
		},
		Old:     map[string]cas.ID{"kept.md": oldWithSecret, "removed.md": cs.add("gone\n")},
		Virtual: map[string]bool{"ignored.md": true},
		Load:    cs.load,
		Before:  func(id cas.ID) []byte { return cs[id] },
		Base:    func() map[string]cas.ID { t.Fatal("A's tree read without a credential in a name"); return nil },
	}, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	want := []Secret{{Path: "new.md", Ranges: []merge.Range{{Start: c.Start + 1, End: c.End + 1}}}}
	if !reflect.DeepEqual(found, want) {
		t.Fatalf("refused %+v, want %+v", found, want)
	}
	if !strings.Contains(logs.String(), "path=new.md") || strings.Contains(logs.String(), c.Secret) {
		t.Fatalf("log %q: want the file named and the secret absent", logs.String())
	}
}

// Without A's content every line of a changed file counts as added: the
// check refuses rather than lets a credential through.
func TestSecretsWithoutBaseContent(t *testing.T) {
	c := secretstest.Cases(8)[0]
	secret := strings.Join(c.Lines, "\n") + "\n"
	cs := contents{}
	found, err := Secrets(Changes{
		Files:  map[string]cas.ID{"kept.md": cs.add(secret + "more\n")},
		Old:    map[string]cas.ID{"kept.md": cas.Sum([]byte(secret))},
		Load:   cs.load,
		Before: func(cas.ID) []byte { return nil },
	}, slog.New(slog.DiscardHandler))
	if err != nil || len(found) != 1 || found[0].Path != "kept.md" {
		t.Fatalf("refused %+v, %v; want kept.md", found, err)
	}
}

// A credential in a new name is refused with the name redacted, without
// reading the content; a directory A already holds
// was accepted earlier and does not block a new file inside it.
func TestSecretsInNames(t *testing.T) {
	var token string
	for _, c := range secretstest.Cases(9) {
		if _, ok := secrets.Redact(c.Secret); ok && !strings.ContainsAny(c.Secret, "/ \n") {
			token = c.Secret
			break
		}
	}
	if token == "" {
		t.Fatal("no case gives a credential that fits in a name")
	}
	shown, _ := secrets.Redact(token)
	files := map[string]cas.ID{
		"new-" + token + "/a.md": cas.Sum([]byte("a")),
		"new-" + token + "/b.md": cas.Sum([]byte("b")),
		"old-" + token + "/c.md": cas.Sum([]byte("c")),
	}
	base := map[string]cas.ID{"old-" + token + "/x.md": cas.Sum([]byte("x"))}
	cs := contents{}
	cs.add("c") // only the file under the accepted directory is read
	found, err := Secrets(Changes{Files: files, Load: cs.load, Base: func() map[string]cas.ID { return base }}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	want := []Secret{
		{Path: "new-" + shown + "/a.md", InName: true, Ranges: []merge.Range{}},
		{Path: "new-" + shown + "/b.md", InName: true, Ranges: []merge.Range{}},
	}
	if !reflect.DeepEqual(found, want) {
		t.Fatalf("refused %+v, want %+v", found, want)
	}
}

// A failure to load a changed file ends the check with that error.
func TestSecretsLoadError(t *testing.T) {
	boom := errors.New("boom")
	_, err := Secrets(Changes{
		Files: map[string]cas.ID{"a.md": cas.Sum([]byte("a"))},
		Load:  func(cas.ID) ([]byte, error) { return nil, boom },
	}, slog.New(slog.DiscardHandler))
	if err != boom {
		t.Fatalf("err %v, want the load's", err)
	}
}

func TestSecretRangesMerged(t *testing.T) {
	got := secretRanges([]secrets.Finding{{Start: 7, End: 8}, {Start: 1, End: 2}, {Start: 3, End: 3}, {Start: 8, End: 9}, {Start: 12, End: 12}})
	want := []merge.Range{{Start: 1, End: 3}, {Start: 7, End: 9}, {Start: 12, End: 12}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ranges %v, want %v", got, want)
	}
}
