package plan

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/merge"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/pstate"
	"github.com/slivingdoc/slivingdoc/server/workdir"
)

// objects is a content store for the tests: put adds a text, load reads it.
type objects map[cas.ID][]byte

func (o objects) put(t *testing.T, text string) cas.ID {
	t.Helper()
	id, err := cas.WriteFile(nil, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	o[id] = []byte(text)
	return id
}

func (o objects) load(id cas.ID) ([]byte, error) {
	c, ok := o[id]
	if !ok {
		return nil, os.ErrNotExist
	}
	return c, nil
}

// tree builds a path → file ID map from path → text pairs.
func (o objects) tree(t *testing.T, files map[string]string) map[string]cas.ID {
	out := map[string]cas.ID{}
	for p, text := range files {
		out[p] = o.put(t, text)
	}
	return out
}

// result reads every path of m as text.
func result(t *testing.T, m *Merged, o objects) map[string]string {
	t.Helper()
	out := map[string]string{}
	for p := range m.IDs {
		c, err := m.Content(p, Local{}, o.load)
		if err != nil {
			t.Fatal(p, err)
		}
		out[p] = string(c)
	}
	return out
}

func ignore(t *testing.T, patterns ...string) *workdir.Ignore {
	t.Helper()
	ign, err := workdir.NewIgnore(patterns, false)
	if err != nil {
		t.Fatal(err)
	}
	return ign
}

// Every path of A, L and R ends kept, merged or removed by the side that
// removed it: the plan loses no line, and a concurrent edit of the same
// line is a conflict block holding both.
func TestMergeKeepsEverySidesLines(t *testing.T) {
	o := objects{}
	base := o.tree(t, map[string]string{"a.md": "1\n2\n3\n", "gone-local.md": "x\n", "gone-remote.md": "y\n", "clash.md": "one\n"})
	local := o.tree(t, map[string]string{"a.md": "1 local\n2\n3\n", "gone-remote.md": "y\n", "clash.md": "one L\n", "new-local.md": "l\n"})
	remote := o.tree(t, map[string]string{"a.md": "1\n2\n3 remote\n", "gone-local.md": "x\n", "clash.md": "one R\n", "new-remote.md": "r\n"})
	m, err := Merge(base, local, remote, nil, o.load)
	if err != nil {
		t.Fatal(err)
	}
	got := result(t, m, o)
	if got["a.md"] != "1 local\n2\n3 remote\n" || got["new-local.md"] != "l\n" || got["new-remote.md"] != "r\n" {
		t.Fatalf("merged = %q", got)
	}
	for _, p := range []string{"gone-local.md", "gone-remote.md"} {
		if _, ok := got[p]; ok {
			t.Errorf("%s was removed by one side and unchanged by the other, but is kept", p)
		}
	}
	if c := got["clash.md"]; !bytes.Contains([]byte(c), []byte("one L")) || !bytes.Contains([]byte(c), []byte("one R")) || len(merge.ScanMarkers([]byte(c))) != 1 {
		t.Errorf("clash.md = %q, want one conflict block holding both lines", c)
	}
	if len(m.Conflicts) != 1 || m.Conflicts[0].Path != "clash.md" {
		t.Errorf("conflicts = %+v", m.Conflicts)
	}
}

// A path whose base is unknown is decided, never merged: equal files are
// adopted, a file one side lacks is kept, and two texts stay whole in one
// block with reason NoRecord, even where the recorded base would have
// made a clean three-way merge take the notebook's text over L's.
func TestUnknownBaseIsNeverMerged(t *testing.T) {
	o := objects{}
	base := o.tree(t, map[string]string{"both.md": "a\nb\n", "same.md": "s\n"})
	local := o.tree(t, map[string]string{"both.md": "a\nb\n", "same.md": "s2\n", "only-l.md": "l\n"})
	remote := o.tree(t, map[string]string{"both.md": "a\nb\nc\n", "same.md": "s2\n", "only-r.md": "r\n"})
	unknown := []string{"both.md", "same.md", "only-l.md", "only-r.md"}
	m, err := Merge(base, local, remote, unknown, o.load)
	if err != nil {
		t.Fatal(err)
	}
	got := result(t, m, o)
	want := map[string]string{
		"both.md":   "<<<<<<< local\na\nb\n=======\na\nb\nc\n>>>>>>> remote\n",
		"same.md":   "s2\n",
		"only-l.md": "l\n",
		"only-r.md": "r\n",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("merged = %q, want %q", got, want)
	}
	if len(m.Conflicts) != 1 || m.Conflicts[0].Path != "both.md" || m.Conflicts[0].Reason != diag.NoRecord || len(m.Conflicts[0].Ranges) != 1 {
		t.Fatalf("conflicts = %+v", m.Conflicts)
	}
	if id, _ := cas.WriteFile(nil, []byte(want["both.md"])); m.IDs["both.md"] != id {
		t.Error("the block's file ID is not its content's")
	}
}

// The block of both texts ends each text with a newline and writes its
// markers in CRLF when L's lines use it.
func TestBothTextsKeepsLinesAndLineEnds(t *testing.T) {
	content, ranges := bothTexts([]byte("a\r\nb"), []byte("c"))
	want := "<<<<<<< local\r\na\r\nb\r\n=======\r\nc\r\n>>>>>>> remote\r\n"
	if string(content) != want {
		t.Fatalf("block = %q, want %q", content, want)
	}
	if len(ranges) != 1 {
		t.Fatalf("ranges = %+v", ranges)
	}
	content, _ = bothTexts(nil, []byte("r\n"))
	if string(content) != "<<<<<<< local\n=======\nr\n>>>>>>> remote\n" {
		t.Fatalf("empty local: %q", content)
	}
}

// WithUnknown marks the paths held with UnknownBase and keeps the rest of
// A; UnknownPaths finds them again, on a directory without a record too.
func TestWithUnknownMarksOnlyThePaths(t *testing.T) {
	o := objects{}
	a := &pstate.Baseline{Generation: 7, Head: o.put(t, "head"), Files: o.tree(t, map[string]string{"k.md": "k\n", "u.md": "u\n"})}
	b := WithUnknown(a, []string{"u.md"})
	if b.Generation != 7 || b.Head != a.Head || b.Files["k.md"] != a.Files["k.md"] || b.Files["u.md"] != UnknownBase {
		t.Fatalf("baseline = %+v", b)
	}
	if b.Held["u.md"] != a.Files["u.md"] || b.Exact() {
		t.Errorf("u.md is not held at the head's file: %+v", b.Held)
	}
	if got := UnknownPaths(&b); !reflect.DeepEqual(got, []string{"u.md"}) {
		t.Errorf("UnknownPaths = %v", got)
	}
	if UnknownPaths(a) != nil || UnknownPaths(nil) != nil {
		t.Error("a baseline without unknown bases reports some")
	}
	none := WithUnknown(nil, []string{"x.md", "y.md"})
	got := UnknownPaths(&none)
	sort.Strings(got)
	if !reflect.DeepEqual(got, []string{"x.md", "y.md"}) || none.Held["x.md"] != (cas.ID{}) {
		t.Errorf("without a record: UnknownPaths = %v, held = %v", got, none.Held)
	}
}

// Changes loads the old and new content of every file that changes, and
// removes what the result lacks; unchanged files are not in the plan.
func TestChangesCarryOldAndNewContent(t *testing.T) {
	o := objects{}
	lFiles := o.tree(t, map[string]string{"same.md": "s\n", "edit.md": "old\n", "drop.md": "d\n"})
	stats := workdir.NewStatCache()
	stats.Set("edit.md", workdir.Entry{Size: 4})
	m := &Merged{IDs: map[string]cas.ID{"same.md": lFiles["same.md"], "edit.md": o.put(t, "new\n"), "add.md": o.put(t, "a\n")}}
	changes, err := Changes(m, Local{Files: lFiles, Stats: stats}, o.load)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, c := range changes {
		paths = append(paths, c.Path)
	}
	if !reflect.DeepEqual(paths, []string{"add.md", "drop.md", "edit.md"}) {
		t.Fatalf("planned %v", paths)
	}
	add, drop, edit := changes[0], changes[1], changes[2]
	if add.Old != nil || string(add.Content) != "a\n" || add.Del || add.Was != nil {
		t.Errorf("add = %+v", add)
	}
	if !drop.Del || string(drop.Old) != "d\n" {
		t.Errorf("drop = %+v", drop)
	}
	if string(edit.Old) != "old\n" || string(edit.Content) != "new\n" || edit.Was == nil || edit.Was.Size != 4 {
		t.Errorf("edit = %+v", edit)
	}
	if ins, del := edit.Stat(); ins != 1 || del != 1 {
		t.Errorf("edit's diffstat = +%d -%d", ins, del)
	}
	if c, err := Changes(&Merged{IDs: lFiles, Local: true}, Local{Files: lFiles, Stats: stats}, o.load); err != nil || c != nil {
		t.Errorf("L as it is plans %v, %v", c, err)
	}
}

// An ignored path is never written or removed in L; a file new in R there
// is withheld (reported for the record), A's virtual file is not.
func TestLeaveIgnoredNeverTouchesIgnoredPaths(t *testing.T) {
	changes := []Change{
		{Path: "keep.md", Content: []byte("k")},
		{Path: "tmp/gone.log", Del: true},
		{Path: "tmp/new.log", Content: []byte("n")},
		{Path: "tmp/virtual.log", Content: []byte("v")},
	}
	kept, withheld := LeaveIgnored(changes, ignore(t, "*.log"), map[string]bool{"tmp/virtual.log": true})
	if len(kept) != 1 || kept[0].Path != "keep.md" {
		t.Errorf("kept = %+v", kept)
	}
	if !reflect.DeepEqual(withheld, []string{"tmp/new.log"}) {
		t.Errorf("withheld = %v", withheld)
	}
}

// Restore writes the withheld files the result holds, once each, in path
// order.
func TestRestoreAddsWithheldFiles(t *testing.T) {
	o := objects{}
	m := &Merged{IDs: map[string]cas.ID{"a.md": o.put(t, "a\n"), "b.log": o.put(t, "b\n"), "c.md": o.put(t, "c\n")}}
	changes := []Change{{Path: "c.md", ID: m.IDs["c.md"], Content: []byte("c\n")}}
	restore := map[string]bool{"b.log": true, "c.md": true, "absent.log": true}
	got, err := Restore(changes, restore, m, func(p string) ([]byte, error) { return m.Content(p, Local{}, o.load) })
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Path != "b.log" || string(got[0].Content) != "b\n" || got[0].ID != m.IDs["b.log"] || got[1].Path != "c.md" {
		t.Fatalf("restored = %+v", got)
	}
}

// The withheld record is one sorted path a line, and no file when empty.
func TestWithheldRecord(t *testing.T) {
	dir := pstate.Dir{Path: t.TempDir()}
	if loadWithheld(dir) != nil {
		t.Fatal("a set without a record")
	}
	if err := SaveWithheld(dir, []string{"b/x.log", "a.log"}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir.Path, "withheld"))
	if err != nil || string(data) != "a.log\nb/x.log\n" {
		t.Fatalf("record = %q, %v", data, err)
	}
	if got := loadWithheld(dir); !reflect.DeepEqual(got, map[string]bool{"a.log": true, "b/x.log": true}) {
		t.Errorf("loaded %v", got)
	}
	if err := SaveWithheld(dir, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir.Path, "withheld")); !os.IsNotExist(err) {
		t.Errorf("an empty set left a record: %v", err)
	}
	if err := SaveWithheld(dir, nil); err != nil {
		t.Errorf("no record to remove: %v", err)
	}
}

// A's file at an ignored path enters L's tree as A's, is recorded as
// withheld and learned; once the rule is gone, a withheld file L lacks is
// restored and one L holds has an unknown base.
func TestAddVirtual(t *testing.T) {
	o := objects{}
	dir := pstate.Dir{Path: t.TempDir()}
	a := &pstate.Baseline{Files: o.tree(t, map[string]string{"doc.md": "d\n", "tmp/a.log": "a\n", "tmp/b.log": "b\n"})}
	warn := func(err error) { t.Errorf("warned: %v", err) }

	var learned []PathID
	files := map[string]cas.ID{"doc.md": a.Files["doc.md"], "tmp/b.log": o.put(t, "L's own\n")}
	v := AddVirtual(dir, Accepted{Baseline: a, Learn: func(l []PathID) { learned = l }}, ignore(t, "*.log"), files, warn)
	if !reflect.DeepEqual(v.Paths, map[string]bool{"tmp/a.log": true, "tmp/b.log": true}) || v.Restore != nil || v.Unknown != nil {
		t.Fatalf("virtual = %+v", v)
	}
	if files["tmp/a.log"] != a.Files["tmp/a.log"] || files["tmp/b.log"] != a.Files["tmp/b.log"] {
		t.Error("the scan's tree does not hold A's files at the ignored paths")
	}
	if len(learned) != 2 {
		t.Errorf("learned %v", learned)
	}
	if got := loadWithheld(dir); len(got) != 2 {
		t.Errorf("withheld record = %v", got)
	}

	// Known set: the same answer without walking A.
	files = map[string]cas.ID{"doc.md": a.Files["doc.md"]}
	v = AddVirtual(dir, Accepted{Ignored: learned, Known: true, Learn: func([]PathID) { t.Error("learned again") }}, ignore(t, "*.log"), files, warn)
	got := slices.Sorted(func(yield func(string) bool) {
		for p := range v.Paths {
			yield(p)
		}
	})
	if !reflect.DeepEqual(got, []string{"tmp/a.log", "tmp/b.log"}) {
		t.Errorf("from the known set: %v", got)
	}

	// The rule removed: L lacks tmp/a.log (restored from A), holds its own
	// tmp/b.log (base unknown, never taken for A's).
	own := o.put(t, "L's own\n")
	files = map[string]cas.ID{"doc.md": a.Files["doc.md"], "tmp/b.log": own}
	v = AddVirtual(dir, Accepted{Baseline: a, Learn: func([]PathID) {}}, ignore(t), files, warn)
	if !v.Restore["tmp/a.log"] || !v.Paths["tmp/a.log"] || files["tmp/a.log"] != a.Files["tmp/a.log"] {
		t.Errorf("tmp/a.log not restored: %+v", v)
	}
	if !reflect.DeepEqual(v.Unknown, []string{"tmp/b.log"}) || v.Paths["tmp/b.log"] || files["tmp/b.log"] != own {
		t.Errorf("tmp/b.log: %+v, L's file replaced: %v", v, files["tmp/b.log"] != own)
	}
}
