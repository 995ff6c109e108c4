package main

// A store a newer slivingdoc wrote: this binary reads `current` in formats
// 1 to 4 and refuses a newer one naming both versions (STORAGE_FAILURE ·
// FORMAT_NEWER, CHECK_HOST: upgrade the binary), never as a corrupt
// manifest, and changes nothing in the directory.

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/server/diag"
)

func init() {
	rowTests["STORAGE_FAILURE/FORMAT_NEWER"] = rowFormatNewer
}

// toNewerFormat rewrites the store's `current` as if a binary of format
// version 5 had written it: the version is the first field, and it is all
// an older decoder reads before it refuses.
func toNewerFormat(t *testing.T, nb *notebook) {
	t.Helper()
	cur := filepath.Join(storeDir(nb), "current")
	data, err := os.ReadFile(cur)
	if err != nil {
		t.Fatal(err)
	}
	newer := regexp.MustCompile(`^\{"version":\d+,`).ReplaceAll(data, []byte(`{"version":5,`))
	if string(newer) == string(data) {
		t.Fatalf("current does not start with its version: %.40s", data)
	}
	if err := os.WriteFile(cur, newer, 0o644); err != nil {
		t.Fatal(err)
	}
}

func rowFormatNewer(t *testing.T, nb *notebook, row diag.CatalogRow) {
	published(t, nb)
	toNewerFormat(t, nb)
	s := nb.agent("a").serve()
	wantRow(t, s.call(ToolPullName, map[string]any{}), row)
}

func TestCLIStoreOfANewerFormatNamesTheVersion(t *testing.T) {
	nb := newNotebook(t, backends[0])
	a := nb.agent("a")
	a.pull()
	a.write("notes.md", "one\n")
	a.commit("one")
	a.write("notes.md", "one\nlocal\n")
	toNewerFormat(t, nb)
	for _, args := range [][]string{{"pull", a.dir}, {"status", a.dir}, {"commit", a.dir, "-m", "x"}, {"log"}, {"show", "1"}} {
		o := a.run(args...)
		rep := mustFail(t, o)
		if rep.code != "STORAGE_FAILURE" || rep.reason != "FORMAT_NEWER" || rep.action != "CHECK_HOST" || rep.retryable {
			t.Fatalf("%v on a format-5 store: %+v\n%s", args, rep, o)
		}
		if !strings.Contains(o.stdout, "format version 5") || !strings.Contains(o.stdout, "versions 1 to 4") {
			t.Fatalf("%v: the report does not name both versions:\n%s", args, o)
		}
	}
	if got := a.files(); len(got) != 1 || got["notes.md"] != "one\nlocal\n" {
		t.Fatalf("the directory changed: %v", got)
	}
}
