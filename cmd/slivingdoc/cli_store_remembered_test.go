package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// withoutStore is the agent's environment with nothing that selects a
// store (credentials stay: they are no store setting).
func (a *agent) withoutStore() []string {
	var out []string
	for _, kv := range a.env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "SLIVINGDOC_STORE", "SLIVINGDOC_BUCKET", "SLIVINGDOC_PREFIX", "SLIVINGDOC_PATH_STYLE", "AWS_ENDPOINT_URL_S3":
			continue
		}
		out = append(out, kv)
	}
	return out
}

// runIn runs the binary in directory dir with environment env.
func (a *agent) runIn(dir string, env []string, args ...string) outcome {
	a.nb.t.Helper()
	return a.execIn(dir, env, "", args...)
}

// Issue 37, point 3: a directory pulled from one store, then used without
// the store settings, was compared with the default store: status listed
// that other notebook's files, pull wrote them into the directory, and
// with the settings back they showed as additions to publish. A directory
// remembers its store now, and a command naming another one is refused.
func TestDirectoryRemembersItsStore(t *testing.T) {
	forEachBackend(t, func(t *testing.T, nb *notebook) {
		a := nb.agent("a")
		a.pull()
		a.write("plan.md", "the plan\n")
		a.commit("plan")
		bare := a.withoutStore()

		// The default store (the user data dir) holds another notebook.
		other := filepath.Join(filepath.Dir(a.dir), "other")
		mustOK(t, a.runIn(filepath.Dir(a.dir), bare, "pull", other))
		if err := os.WriteFile(filepath.Join(other, "other.md"), []byte("another notebook\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		mustOK(t, a.runIn(filepath.Dir(a.dir), bare, "commit", other, "-m", "other"))

		// Without store settings, the directory's own store.
		st := a.runIn(a.dir, bare, "status", a.dir)
		if st.code != 0 || strings.Contains(st.stdout, "other.md") {
			t.Fatalf("status compared the directory with another store:\n%s", st)
		}
		mustOK(t, a.runIn(a.dir, bare, "pull", a.dir))
		if got := a.files(); len(got) != 1 || got["plan.md"] != "the plan\n" {
			t.Fatalf("pull without store settings wrote another notebook's files: %q", got)
		}
		a.write("plan.md", "the plan\nstep two\n")
		res := mustOK(t, a.runIn(a.dir, bare, "commit", a.dir, "-m", "step two"))
		if res.generation != 2 {
			t.Fatalf("commit without store settings at generation %d, want 2 in the directory's store", res.generation)
		}
		if log := a.runIn(a.dir, bare, "log", "-n", "5"); log.code != 0 || !strings.Contains(log.stdout, "step two") || strings.Contains(log.stdout, "other") {
			t.Fatalf("log inside the directory did not list its own store:\n%s", log)
		}
		// With the settings back, the store agrees: nothing to publish.
		b := nb.agent("b")
		b.pull()
		if got := b.files(); len(got) != 1 || got["plan.md"] != "the plan\nstep two\n" {
			t.Fatalf("the directory's store holds %q", got)
		}
		st = a.run("status", a.dir)
		if st.code != 0 || strings.Contains(st.stdout, "other.md") || strings.Contains(st.stdout, "plan.md") {
			t.Fatalf("status with the store settings:\n%s", st)
		}

		// Another store named explicitly is refused, nothing changed.
		before := a.files()
		otherStore := "file://" + filepath.ToSlash(filepath.Join(filepath.Dir(a.dir), "elsewhere"))
		for _, args := range [][]string{
			{"status", a.dir, "--store", otherStore},
			{"pull", a.dir, "--store", otherStore},
			{"commit", a.dir, "-m", "m", "--store", otherStore},
			{"pull", filepath.Join(a.dir, "sub"), "--store", otherStore}, // a notebook of another store inside it
		} {
			o := a.runIn(a.dir, bare, args...)
			r := mustFail(t, o)
			if r.code != "INVALID_REQUEST" || r.reason != "STORE_MISMATCH" || r.action != "FIX_REQUEST" || r.retryable {
				t.Fatalf("%v: want INVALID_REQUEST/STORE_MISMATCH/FIX_REQUEST:\n%s", args, o)
			}
			if strings.Contains(o.stdout, a.priv) || strings.Contains(o.stdout, "AWS_SECRET") {
				t.Fatalf("the refusal shows a private path or a credential:\n%s", o)
			}
			if got := a.files(); len(got) != len(before) || got["plan.md"] != before["plan.md"] {
				t.Fatalf("%v changed the directory: %q", args, got)
			}
		}
		// The other notebook was left alone by all this.
		if got := readTree(t, other); len(got) != 1 || got["other.md"] != "another notebook\n" {
			t.Fatalf("the other notebook's directory holds %q", got)
		}
	})
}
