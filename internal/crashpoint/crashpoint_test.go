package crashpoint

import "testing"

// A key names the same effect on every run: hashes, random suffixes and
// publication IDs are blotted out, the kind of file is kept.
func TestKeyIsStableAcrossRuns(t *testing.T) {
	for _, c := range []struct{ label, detail, want string }{
		{"workdir.rename", "b/b.md", "workdir.rename|b.md"},
		{"osfile.rename", "/p/dirs/866e62327d4f1d7c2abb36a69299dc01/pending", "osfile.rename|pending"},
		{"store.write", "packs/increments/00000000000000000003-01a2492e-edce-7492-a527-d9eb44db915a.pack", "store.write|#-#-#-#-#-#.pack"},
		{"osfile.fsync-dir", "/w/a/notes/./.", "osfile.fsync-dir|."},
		{"state.remove", "rewrite-24815f083e31f039ffe9beb624234e10f36f2bb46466042bdbf49a7cbf1baddc", "state.remove|rewrite-#"},
		{"workdir.stage", "", "workdir.stage|"},
		{"workdir.rename", "my notes.md", "workdir.rename|my_notes.md"},
	} {
		if got := Key(c.label, c.detail); got != c.want {
			t.Errorf("Key(%q, %q) = %q, want %q", c.label, c.detail, got, c.want)
		}
	}
}

func TestRegisterListsEachLabelOnce(t *testing.T) {
	a := Register("test.one")
	Register("test.one")
	Register("test.two")
	n := 0
	for _, l := range Labels() {
		if l == a {
			n++
		}
	}
	if n != 1 || !registered("test.two") {
		t.Fatalf("Labels() = %v", Labels())
	}
}
