//go:build unix

package main

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// A journal written by a writer reads back: every token written, and
// exactly those covered by an OK commit.
func TestJournalRecordsWritesAndOKs(t *testing.T) {
	dir := t.TempDir()
	nb := filepath.Join(dir, "nb")
	if err := os.MkdirAll(nb, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range initialTree(2) {
		if err := os.WriteFile(filepath.Join(nb, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	j, err := os.Create(filepath.Join(dir, "journal"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	w := &writer{id: 1, dir: nb, tag: "chaos-1-file-w01", rng: rand.New(rand.NewPCG(1, 2)), journal: j}
	var toks []string
	for range 3 {
		tok, err := w.edit()
		if err != nil {
			t.Fatal(err)
		}
		toks = append(toks, tok)
	}
	if err := w.accepted(7); err != nil { // the first three were committed
		t.Fatal(err)
	}
	last, err := w.edit() // written, never reported OK
	if err != nil {
		t.Fatal(err)
	}
	got, err := readJournal(j.Name())
	if err != nil {
		t.Fatal(err)
	}
	if want := append(toks, last); !reflect.DeepEqual(got.written, want) {
		t.Fatalf("written = %v, want %v", got.written, want)
	}
	if want := map[string]bool{toks[0]: true, toks[1]: true, toks[2]: true}; !reflect.DeepEqual(got.ok, want) {
		t.Fatalf("ok = %v, want %v", got.ok, want)
	}
	// A crashed rewrite's temporary sibling holds a copy; it is not a
	// file of the notebook.
	if err := os.WriteFile(filepath.Join(nb, ".slivingdoc-tmp-0123456789abcdef.tmp"), []byte(last+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	onDisk, err := countTokens(nb)
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range append(toks, last) {
		if onDisk[tok] != 1 {
			t.Fatalf("token %s is %d times in the directory, want once", tok, onDisk[tok])
		}
	}
}

func TestJudge(t *testing.T) {
	journals := map[int]journal{
		0: {written: []string{"chaos-a1", "chaos-a2", "chaos-a3", "chaos-a4", "chaos-a5"}, ok: map[string]bool{"chaos-a1": true, "chaos-a2": true}},
	}
	tests := []struct {
		name   string
		fresh  map[string]int
		onDisk map[string]int
		want   verdict // Problems are checked by count only
		nProbs int
	}{
		{"all published", map[string]int{"chaos-a1": 1, "chaos-a2": 1, "chaos-a3": 1, "chaos-a4": 1, "chaos-a5": 1}, nil,
			verdict{Written: 5, Accepted: 2, Published: 3}, 0},
		{"unpublished but on disk", map[string]int{"chaos-a1": 1, "chaos-a2": 1}, map[string]int{"chaos-a3": 1, "chaos-a4": 1, "chaos-a5": 1},
			verdict{Written: 5, Accepted: 2, OnDisk: 3}, 0},
		{"accepted then lost", map[string]int{"chaos-a2": 1, "chaos-a3": 1, "chaos-a4": 1, "chaos-a5": 1}, map[string]int{"chaos-a1": 1},
			verdict{Written: 5, Accepted: 1, Published: 3, Lost: 1}, 1},
		{"local edit gone everywhere", map[string]int{"chaos-a1": 1, "chaos-a2": 1, "chaos-a3": 1}, map[string]int{"chaos-a4": 1},
			verdict{Written: 5, Accepted: 2, Published: 1, OnDisk: 1, Lost: 1}, 1},
		{"duplicated", map[string]int{"chaos-a1": 2, "chaos-a2": 1, "chaos-a3": 3}, map[string]int{"chaos-a4": 1, "chaos-a5": 1},
			verdict{Written: 5, Accepted: 1, OnDisk: 2, Duplicated: 2}, 2},
		{"phantom", map[string]int{"chaos-a1": 1, "chaos-a2": 1, "chaos-zz": 1}, map[string]int{"chaos-a3": 1, "chaos-a4": 1, "chaos-a5": 1},
			verdict{Written: 5, Accepted: 2, OnDisk: 3, Phantom: 1}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := judge(journals, tc.fresh, map[int]map[string]int{0: tc.onDisk})
			if len(got.Problems) != tc.nProbs {
				t.Errorf("problems = %q, want %d", got.Problems, tc.nProbs)
			}
			got.Problems = nil
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("verdict = %+v, want %+v", got, tc.want)
			}
		})
	}
}
