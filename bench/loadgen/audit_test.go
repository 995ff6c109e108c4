package main

import (
	"context"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

var built struct {
	once sync.Once
	bin  string
	err  error
}

// testRunner builds slivingdoc once per test binary and returns a runner
// on the file store with a tiny contention profile.
func testRunner(t *testing.T) *runner {
	t.Helper()
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "loadgen-test-bin-")
		if err != nil {
			built.err = err
			return
		}
		built.bin = filepath.Join(dir, "slivingdoc")
		out, err := exec.Command("go", "build", "-o", built.bin, "github.com/slivingdoc/slivingdoc/cmd/slivingdoc").CombinedOutput()
		if err != nil {
			built.err = err
			built.bin = string(out)
		}
	})
	if built.err != nil {
		t.Fatalf("go build: %v\n%s", built.err, built.bin)
	}
	work := t.TempDir()
	prof := profiles["quick"]
	prof.contentionCommits = 3
	prof.contentionTimeout = 2 * time.Minute
	return &runner{bin: built.bin, work: work, prof: prof, log: log.New(os.Stderr, "", 0),
		stores: map[string]*storeTarget{"file": fileTarget(work)}}
}

func TestMain(m *testing.M) {
	if len(os.Args) == 2 && os.Args[1] == spawnerArg {
		spawnerMain() // the spawner test starts this binary as its spawner
		return
	}
	code := m.Run()
	if built.bin != "" {
		os.RemoveAll(filepath.Dir(built.bin))
	}
	os.Exit(code)
}

// Writers racing through the real binary leave every accepted line exactly
// once, on disjoint files and on one shared file; appending at the end of
// one shared file, they never conflict (DESIGN §4 rule 6).
func TestContentionAuditPasses(t *testing.T) {
	for _, mode := range []string{modeDisjoint, modeShared, modeSections} {
		t.Run(mode, func(t *testing.T) {
			r := testRunner(t)
			res, err := r.contention(context.Background(), r.stores["file"], mode, 3)
			if err != nil {
				t.Fatal(err)
			}
			if res.Accepted != 9 || !res.Check.OK() || res.Check.Expected != 9 || int(res.Generations) != res.Accepted {
				t.Fatalf("accepted %d/9, generations %d, audit %+v", res.Accepted, res.Generations, res.Check)
			}
			if res.Attempts < res.Accepted {
				t.Fatalf("%d attempts counted for %d accepted commits", res.Attempts, res.Accepted)
			}
			if mode != modeSections && res.Conflicts != 0 {
				t.Fatalf("%d conflicts appending (%s)", res.Conflicts, mode)
			}
		})
	}
}

// A line deleted behind the writers' back — by another notebook user who
// pulls, deletes one accepted line and commits — is reported lost, and it
// is the only finding.
func TestContentionAuditCatchesPlantedLoss(t *testing.T) {
	r := testRunner(t)
	var victim string
	r.sabotage = func(ctx context.Context, st *storeTarget, loc string, actors []*actor) error {
		a := actors[1]
		victim = a.accepted[1]
		nb := r.newNotebook(st, loc, filepath.Join(r.work, "saboteur"), false)
		if _, err := mustOK(nb.pull(ctx)); err != nil {
			return err
		}
		path := filepath.Join(nb.dir, filepath.FromSlash(a.file))
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		cut := strings.Replace(string(data), victim+"\n", "", 1)
		if cut == string(data) {
			t.Fatalf("line %q not in %s:\n%s", victim, a.file, data)
		}
		if err := os.WriteFile(path, []byte(cut), 0o644); err != nil {
			return err
		}
		_, err = mustOK(nb.commit(ctx, "delete one line"))
		return err
	}
	res, err := r.contention(context.Background(), r.stores["file"], modeDisjoint, 3)
	if err != nil {
		t.Fatal(err)
	}
	if res.Check.OK() || !slices.Equal(res.Check.Lost, []string{victim}) || len(res.Check.Duplicated) != 0 || len(res.Check.Unknown) != 0 {
		t.Fatalf("planted loss of %q: audit %+v", victim, res.Check)
	}
	if !strings.Contains(auditText(res.Check, 0, 0), "FAILED") {
		t.Fatalf("the report does not flag the failed audit: %s", auditText(res.Check, 0, 0))
	}
}
