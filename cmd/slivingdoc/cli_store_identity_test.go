package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/remote"
)

// fileStoreDir is the directory of the notebook's file store.
func (nb *notebook) fileStoreDir() string {
	nb.t.Helper()
	for _, kv := range nb.env {
		if v, ok := strings.CutPrefix(kv, "SLIVINGDOC_STORE=file://"); ok {
			return filepath.FromSlash(v)
		}
	}
	nb.t.Fatal("not a file store")
	return ""
}

// topPackGeneration is the highest generation a proposal in the file
// store at dir would take if accepted alone: one past the generation it
// was built on (0: none).
func topPackGeneration(t *testing.T, dir string) uint64 {
	t.Helper()
	var top uint64
	entries, err := os.ReadDir(filepath.Join(dir, "proposals"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range entries {
		if kind, g, _, _, _ := remote.ParseProposalEntry(remote.ProposalsPrefix + e.Name()); kind == remote.EntryProposal {
			top = max(top, g+1)
		}
	}
	return top
}

// copyTree copies the regular files and directories under src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func wantReason(t *testing.T, o outcome, code, reason string) {
	t.Helper()
	r := mustFail(t, o)
	if r.code != code || r.reason != reason {
		t.Fatalf("want %s/%s:\n%s", code, reason, o)
	}
}

// Issue 37, point 5: delete a store and start again at the same URL. The
// machine's turns had kept the old store's state, so the first commit
// built on generation 3 and left a pack of generation 4 in the new store;
// from then on every host, a fresh one too, was refused with
// GENERATION_REGRESSED until someone deleted that pack by hand.
func TestStoreDeletedAndStartedAgainCLI(t *testing.T) {
	nb := newNotebook(t, backends[0])
	a := nb.agent("a")
	a.pull()
	for i := 1; i <= 3; i++ {
		a.write("log.md", strings.Repeat("line\n", i))
		a.commit("c" + strconv.Itoa(i))
	}
	store := nb.fileStoreDir()
	if err := os.RemoveAll(store); err != nil {
		t.Fatal(err)
	}

	// The first command after the deletion, in the old directory: its
	// record belongs to the deleted store; refused, its files kept, and
	// nothing left in the new store.
	a.write("log.md", "line\nline\nline\nlocal\n")
	before := a.files()
	wantReason(t, a.run("commit", a.dir, "-m", "after the deletion"), "ENGINE_FAILED", "BASELINE_LOST")
	if g := topPackGeneration(t, store); g > 1 {
		t.Fatalf("a commit left a pack of generation %d in the new store", g)
	}
	if got := a.files(); got["log.md"] != before["log.md"] || len(got) != len(before) {
		t.Fatalf("the refused commit changed the directory: %q", got)
	}

	// Every host uses the new store: a fresh one, and this one.
	b := nb.agent("b")
	if r := b.pull(); r.generation != 0 {
		t.Fatalf("fresh host pulled generation %d of the new store", r.generation)
	}
	b.write("new.md", "new store\n")
	if r := b.commit("first"); r.generation != 1 {
		t.Fatalf("first commit of the new store at generation %d", r.generation)
	}
	fresh := filepath.Join(filepath.Dir(a.dir), "fresh")
	mustOK(t, a.run("pull", fresh))
	if got := readTree(t, fresh); len(got) != 1 || got["new.md"] != "new store\n" {
		t.Fatalf("this host's new directory holds %q", got)
	}
	writeTo(t, filepath.Join(fresh, "new.md"), "new store\nfrom a\n")
	if r := mustOK(t, a.run("commit", fresh, "-m", "from a")); r.generation != 2 {
		t.Fatalf("commit from this host at generation %d, want 2", r.generation)
	}
	if g := topPackGeneration(t, store); g != 2 {
		t.Fatalf("the new store's packs go up to generation %d, want 2", g)
	}
	if r := nb.agent("c").pull(); r.generation != 2 {
		t.Fatalf("a fresh host reads generation %d, want 2", r.generation)
	}
}

func writeTo(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The backup and restore procedure of docs/operations.md §3B, step by
// step, on a version-4 store: nothing written after the backup,
// committed or not, is lost, and nothing written after it is published
// twice. A checkpoint every 2 generations, so the commits after the
// backup leave registrations and checkpoints above the restored
// generation as well as proposals.
func TestRestoreFromBackupProcedure(t *testing.T) {
	nb := newNotebook(t, backends[0])
	a := nb.agent("a")
	a.env = append(a.env, "SLIVINGDOC_CHECKPOINT_PACKS=2")
	a.pull()
	a.write("kept.md", "before the backup\n")
	a.commit("one")
	b := nb.agent("b") // a host that never saw what came after the backup
	b.pull()
	store := nb.fileStoreDir()
	backup := filepath.Join(t.TempDir(), "backup")
	copyTree(t, store, backup) // the operator's backup of the whole prefix
	a.write("later.md", "published after the backup\n")
	a.commit("two")
	for i := range 4 {
		a.write(fmt.Sprintf("more%d.md", i), "more\n")
		a.commit(fmt.Sprint("more ", i))
	}
	a.write("later.md", "published after the backup\nand again\n")
	a.commit("three")
	a.write("local.md", "never committed\n")
	newer := filepath.Join(t.TempDir(), "newer") // what the restore will bring back too
	copyTree(t, store, newer)

	// The bucket is lost.
	if err := os.RemoveAll(store); err != nil {
		t.Fatal(err)
	}
	// 1. Stop every writer; restore the backup into an empty prefix. This
	// restore also brought back every object written after the backup
	// (from a later, partial copy) but `current`.
	copyTree(t, backup, store)
	var later []string // keys not in the backup
	if err := filepath.WalkDir(newer, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(newer, p)
		if _, err := os.Stat(filepath.Join(backup, rel)); err == nil || rel == "current" {
			return nil
		}
		later = append(later, filepath.ToSlash(rel))
		return os.MkdirAll(filepath.Dir(filepath.Join(store, rel)), 0o755)
	}); err != nil {
		t.Fatal(err)
	}
	for _, key := range later {
		data, err := os.ReadFile(filepath.Join(newer, filepath.FromSlash(key)))
		if err == nil {
			err = os.WriteFile(filepath.Join(store, filepath.FromSlash(key)), data, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	// 2. Verify names the proposals and registrations built on or
	// registered for generations above the restored one; move them aside
	// with every object under proposals/ and packs/groups/ the backup does
	// not hold, then verify is clean.
	o := a.run("verify", "--json")
	var v verifyJSON
	if err := json.Unmarshal([]byte(o.stdout), &v); err != nil || o.code == 0 {
		t.Fatalf("verify of the restored store with newer objects:\n%s", o)
	}
	aside := t.TempDir()
	moveAside := func(key string) {
		t.Helper()
		dst := filepath.Join(aside, filepath.FromSlash(key))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(store, filepath.FromSlash(key)), dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
	}
	kinds := map[string]bool{}
	for _, f := range v.Findings {
		if f.Code != "GENERATION_REGRESSED" {
			t.Fatalf("verify of the restored store: %+v\n%s", f, o)
		}
		kind, _, _, _, _ := remote.ParseProposalEntry(f.Key)
		kinds[fmt.Sprint(kind)] = true
		moveAside(f.Key)
	}
	if !kinds[fmt.Sprint(remote.EntryProposal)] || !kinds[fmt.Sprint(remote.EntryCheckpoint)] {
		t.Fatalf("verify named no proposal or no registered checkpoint above the restored generation:\n%s", o)
	}
	for _, key := range later {
		if strings.HasPrefix(key, remote.ProposalsPrefix) || strings.HasPrefix(key, "packs/groups/") {
			moveAside(key)
		}
	}
	if o := a.run("verify"); o.code != 0 {
		t.Fatalf("verify of the restored store:\n%s", o)
	}
	// Until step 3, a host that saw more refuses the store, nothing changed.
	before := a.files()
	wantReason(t, a.run("pull", a.dir), "STORAGE_INTEGRITY", "GENERATION_REGRESSED")
	// 3. On every host, delete the store records and the turns' state.
	for _, h := range []*agent{a, b} {
		for _, p := range []string{filepath.Join(h.priv, "stores"), filepath.Join(filepath.Dir(h.priv), "xdg-cache", "slivingdoc", "turns")} {
			if err := os.RemoveAll(p); err != nil {
				t.Fatal(err)
			}
		}
	}
	// 4. Verify, then writers resume.
	if o := a.run("verify"); o.code != 0 {
		t.Fatalf("verify:\n%s", o)
	}
	// a's record is newer than the store: a commit is refused, every
	// file kept; a pull adopts the directory as one without a record
	// (files the store lacks stay as local additions, nothing written
	// after the backup is taken for a remote deletion).
	wantReason(t, a.run("commit", a.dir, "-m", "m"), "ENGINE_FAILED", "BASELINE_LOST")
	if got := a.files(); len(got) != len(before) || got["later.md"] != before["later.md"] || got["local.md"] != before["local.md"] {
		t.Fatalf("the refused commit changed the directory: %q", got)
	}
	// b's record is the restored generation: merged as usual.
	if r := b.pull(); r.generation != 1 {
		t.Fatalf("b pulled generation %d, want the restored 1", r.generation)
	}
	a.pull()
	if got := a.files(); len(got) != len(before) || got["later.md"] != before["later.md"] || got["local.md"] != before["local.md"] {
		t.Fatalf("the pull that adopted the directory changed it: %q", got)
	}
	// Generation 2: no version written after the backup was folded
	// again beside it.
	if r := a.commit("published again after the restore"); r.generation != 2 {
		t.Fatalf("the commit after the restore: generation %d, want 2", r.generation)
	}
	want := map[string]string{"kept.md": "before the backup\n", "later.md": "published after the backup\nand again\n", "local.md": "never committed\n"}
	for i := range 4 {
		want[fmt.Sprintf("more%d.md", i)] = "more\n"
	}
	for _, h := range []*agent{b, nb.agent("c")} {
		h.pull()
		if got := h.files(); !maps.Equal(got, want) {
			t.Fatalf("%s holds %q, want %q", h.name, got, want)
		}
	}
	if o := a.run("verify"); o.code != 0 {
		t.Fatalf("verify after the restore:\n%s", o)
	}
}
