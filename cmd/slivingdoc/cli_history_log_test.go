package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// log --json, --path, --since and --until select and print what they say.
func TestCLILogFilters(t *testing.T) {
	nb := newNotebook(t, backends[0])
	a := nb.agent("a")
	a.pull()
	a.write("a.md", "1\n")
	a.commit("first <a>") // 1
	a.write("dir/b.md", "b\n")
	a.commit("second") // 2
	a.remove("a.md")
	a.commit("third") // 3

	o := a.run("log", "--json", "-p", "--path", "a.md")
	var entries []struct {
		Generation uint64 `json:"generation"`
		Time       string `json:"time"`
		Message    string `json:"message"`
		Files      []struct {
			Path       string `json:"path"`
			Status     string `json:"status"`
			Insertions int    `json:"insertions"`
			Deletions  int    `json:"deletions"`
		} `json:"files"`
		Patch *string `json:"patch"`
	}
	if o.code != 0 || json.Unmarshal([]byte(o.stdout), &entries) != nil {
		t.Fatalf("log --json:\n%s", o)
	}
	if len(entries) != 2 || entries[0].Generation != 3 || entries[1].Message != "first <a>" {
		t.Fatalf("entries %+v", entries)
	}
	f := entries[0].Files
	if len(f) != 1 || f[0].Path != "a.md" || f[0].Status != "removed" || f[0].Deletions != 1 || entries[1].Files[0].Status != "added" {
		t.Fatalf("files %+v", f)
	}
	if entries[0].Patch == nil || !strings.Contains(*entries[0].Patch, "deleted file mode 100644\n--- a/a.md\n+++ /dev/null\n@@ -1 +0,0 @@\n-1\n") {
		t.Fatalf("patch %v", entries[0].Patch)
	}
	if _, err := time.Parse(time.RFC3339, entries[0].Time); err != nil {
		t.Fatal(err)
	}
	if o := a.run("log", "--json", "-n", "1"); o.code != 0 || strings.Contains(o.stdout, `"patch"`) {
		t.Fatalf("no patch without -p:\n%s", o)
	}
	if o := a.run("log", "--path", "dir"); o.code != 0 || strings.Count(o.stdout, "generation ") != 1 || !strings.Contains(o.stdout, "generation 2") {
		t.Fatalf("log --path dir:\n%s", o)
	}
	if o := a.run("log", "--since", "1h"); o.code != 0 || strings.Count(o.stdout, "generation ") != 3 {
		t.Fatalf("log --since 1h:\n%s", o)
	}
	if o := a.run("log", "--until", "2020-01-01"); o.code != 0 || o.stdout != "" {
		t.Fatalf("log --until 2020-01-01:\n%s", o)
	}
	tomorrow := time.Now().UTC().Add(24 * time.Hour).Format("2006-01-02")
	if o := a.run("log", "--since", tomorrow, "--json"); o.code != 0 || strings.TrimSpace(o.stdout) != "[]" {
		t.Fatalf("log --since tomorrow:\n%s", o)
	}
}

func TestParseWhen(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		in    string
		until bool
		want  time.Time
	}{
		{"", false, time.Time{}},
		{"2026-11-30T10:00:00Z", false, time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)},
		{"2026-11-30T11:00:00+01:00", false, time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)},
		{"2026-11-30 10:00", false, time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)},
		{"2026-11-29", false, time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)},
		{"2026-11-29", true, time.Date(2026, 11, 29, 23, 59, 59, 0, time.UTC)},
		{"90m", false, now.Add(-90 * time.Minute)},
		{"7d", false, now.Add(-7 * 24 * time.Hour)},
	} {
		got, err := parseWhen(c.in, now, c.until)
		if err != nil || !got.Equal(c.want) {
			t.Errorf("parseWhen(%q, until=%v) = %v, %v; want %v", c.in, c.until, got, err, c.want)
		}
	}
	for _, bad := range []string{"yesterday", "-5m", "2026-13-01", "5x"} {
		if _, err := parseWhen(bad, now, false); err == nil {
			t.Errorf("parseWhen(%q) accepted", bad)
		}
	}
}
