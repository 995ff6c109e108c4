package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/seaweed"
)

// Nothing the CLI prints at the default log level, on stdout or stderr, in
// results, reports or log records, holds a private path, an object ID, a
// pack or probe key, or a credential — across successes, conflicts, bad
// input and store failures.
func TestCLIOutputLeaksNothing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, nb *notebook) {
		var outs []outcome
		keep := func(o outcome) outcome { outs = append(outs, o); return o }
		a, b, c := nb.agent("a"), nb.agent("b"), nb.agent("c")

		keep(a.run("pull", a.dir))
		a.write("n.md", "one\ntwo\n")
		keep(a.run("commit", a.dir, "-m", "one"))
		keep(b.run("pull", b.dir))
		a.write("n.md", "one\nA\n")
		keep(a.run("commit", a.dir, "-m", "a"))
		b.write("n.md", "one\nB\n")
		keep(b.run("commit", b.dir, "-m", "b")) // conflict
		keep(b.run("commit", b.dir, "-m", "b")) // unresolved markers
		b.write("bad.md", "\xff")
		keep(b.run("status", b.dir))
		keep(b.run("pull", b.dir))
		keep(c.run("commit", c.dir, "-m", "never pulled"))
		keep(a.run("log"))
		secrets := []string{a.priv, b.priv, c.priv}
		if nb.backend == "seaweedfs" {
			srv := seaweed.Shared(t)
			secrets = append(secrets, srv.SecretKey, srv.ReadOnlySecretKey)
			ro := []string{"AWS_ACCESS_KEY_ID=" + srv.ReadOnlyAccessKey, "AWS_SECRET_ACCESS_KEY=" + srv.ReadOnlySecretKey}
			keep(a.runEnv(ro, "commit", a.dir, "-m", "denied"))
			keep(a.run("pull", a.dir, "--endpoint", "http://127.0.0.1:1"))
		} else {
			// A damaged store: missing packs for a directory with no cache,
			// then a corrupt `current` holding an object ID.
			store := filepath.FromSlash(strings.TrimPrefix(envValue(nb.env, "SLIVINGDOC_STORE"), "file://"))
			for _, dir := range []string{"packs", "proposals"} { // a v4 store's packs are in its proposals too
				if err := os.RemoveAll(filepath.Join(store, dir)); err != nil {
					t.Fatal(err)
				}
			}
			d := nb.agent("d")
			rep := mustFail(t, keep(d.run("pull", d.dir)))
			if rep.code != "STORAGE_INTEGRITY" || rep.action != "RUN_VERIFY" {
				t.Errorf("missing packs: %+v", rep)
			}
			bad := `{"version":1,"generation":3,"head":"` + strings.Repeat("ab", 32) + `"`
			if err := os.WriteFile(filepath.Join(store, "current"), []byte(bad), 0o644); err != nil {
				t.Fatal(err)
			}
			rep = mustFail(t, keep(a.run("pull", a.dir)))
			if rep.code != "STORAGE_INTEGRITY" || rep.reason != "CORRUPT_MANIFEST" || rep.action != "RUN_VERIFY" {
				t.Errorf("corrupt manifest: %+v", rep)
			}
		}

		ids := regexp.MustCompile(`\b[0-9a-f]{40,64}\b|packs/|probe/`)
		for _, o := range outs {
			text := o.stdout + o.stderr
			for _, s := range secrets {
				if s != "" && strings.Contains(text, s) {
					t.Errorf("output shows %q:\n%s", s, o)
				}
			}
			if m := ids.FindString(text); m != "" {
				t.Errorf("output shows %q:\n%s", m, o)
			}
		}
	})
}

func envValue(env []string, key string) string {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}
