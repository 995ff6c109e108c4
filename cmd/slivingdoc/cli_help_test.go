package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// -h prints the reference, naming every setting's flag (help store has
// their variables), exits 0 and touches nothing: no store, no private root,
// no notebook directory. Bad settings exit 2 and touch nothing either.
func TestCLIHelpTouchesNothing(t *testing.T) {
	nb := &notebook{t: t, bin: cliBinary(t)}
	base := t.TempDir()
	nb.env = []string{"SLIVINGDOC_STORE=file://" + filepath.ToSlash(filepath.Join(base, "store"))}
	a := nb.agent("a")
	a.env = append(a.env, "SLIVINGDOC_PRIVATE_ROOT="+filepath.Join(base, "private"))
	for _, cmd := range []string{"pull", "commit", "status", "log"} {
		args := []string{cmd, "-h"}
		if cmd != "log" {
			args = []string{cmd, filepath.Join(base, "notes"), "-h"}
		}
		o := a.run(args...)
		if o.code != 0 {
			t.Fatalf("%s", o)
		}
		for _, st := range allSettings {
			if !strings.Contains(o.stdout, "--"+st.flag) {
				t.Errorf("%s -h lacks --%s", cmd, st.flag)
			}
		}
		for _, st := range retiredSettings {
			if strings.Contains(o.stdout, st.flag) {
				t.Errorf("%s -h advertises the retired --%s", cmd, st.flag)
			}
		}
	}
	o := a.run("help", "store")
	for _, st := range allSettings {
		if o.code != 0 || !strings.Contains(o.stdout, "--"+st.flag) || !strings.Contains(o.stdout, st.env) {
			t.Errorf("help store lacks --%s / %s:\n%s", st.flag, st.env, o)
		}
	}
	for _, st := range retiredSettings {
		if strings.Contains(o.stdout, st.flag) || strings.Contains(o.stdout, st.env) {
			t.Errorf("help store advertises the retired --%s / %s", st.flag, st.env)
		}
	}
	for _, bad := range [][]string{
		{"pull", filepath.Join(base, "notes"), "--commit-retries", "-1"},
		{"pull", filepath.Join(base, "notes"), "--store", "nowhere"},
		{"commit", filepath.Join(base, "notes")}, // no message
		{"pull", "--no-such-flag"},
		{"commit", filepath.Join(base, "notes"), "-m", "x", "--path-style=maybe"},
		{"log", "-n", "0"},
		{"status", "a", "b"},
	} {
		if o := a.run(bad...); o.code != 2 || o.stdout != "" || o.stderr == "" {
			t.Errorf("want exit 2 with a message on stderr:\n%s", o)
		}
	}
	entries, err := os.ReadDir(base)
	if err != nil || len(entries) != 0 {
		t.Fatalf("-h or a usage error created %v (%v)", entries, err)
	}
}
