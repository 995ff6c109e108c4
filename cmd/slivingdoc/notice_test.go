package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

var updateNotice = flag.Bool("update-notice", false, "rewrite NOTICE from the binary's module graph")

const noticePath = "../../NOTICE"

// TestNoticeMatchesModuleGraph keeps NOTICE true to what the binary links:
// it is generated from `go list -deps ./cmd/slivingdoc` and each module's
// licence files, so adding, removing or upgrading a dependency fails here
// until `go test ./cmd/slivingdoc -run TestNotice -update-notice` is run
// (and a licence the generator cannot name fails until someone looks).
func TestNoticeMatchesModuleGraph(t *testing.T) {
	want := generateNotice(t)
	if *updateNotice {
		if err := os.WriteFile(noticePath, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(noticePath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("NOTICE is out of date with the module graph; run go test ./cmd/slivingdoc -run TestNotice -update-notice")
	}
}

// The project's own licence, as LICENSE and the npm packages state it.
func TestLicenceIsStatedAlike(t *testing.T) {
	lic, err := os.ReadFile("../../LICENSE")
	if err != nil {
		t.Fatal(err)
	}
	if ids := licenceIDs(lic); len(ids) != 1 || ids[0] != projectLicence {
		t.Fatalf("LICENSE reads as %v, want %s", ids, projectLicence)
	}
	for _, p := range []string{"../../npm/slivingdoc/package.json", "../../npm/platform/package.json"} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var m struct{ License string }
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if m.License != projectLicence {
			t.Errorf("%s: license %q, want %q", p, m.License, projectLicence)
		}
	}
}

const projectLicence = "Apache-2.0"

type module struct {
	Path, Version, Dir string
	Main               bool
	Replace            *module
}

func generateNotice(t *testing.T) []byte {
	t.Helper()
	// -json prints every package; the modules are picked out below.
	out, err := exec.Command("go", "list", "-deps", "-json=Module", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := map[string]module{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var pkg struct{ Module *module }
		if err := dec.Decode(&pkg); err != nil {
			t.Fatal(err)
		}
		if pkg.Module == nil || pkg.Module.Main {
			continue // the standard library, or slivingdoc itself
		}
		m := *pkg.Module
		if m.Replace != nil {
			m = *m.Replace
		}
		seen[m.Path] = m
	}
	paths := make([]string, 0, len(seen))
	for p := range seen {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var b, notices strings.Builder
	b.WriteString(`slivingdoc
Copyright 2026 The slivingdoc authors

slivingdoc is licensed under the Apache License, Version 2.0 (LICENSE).

The slivingdoc binary is built with the Go toolchain and links the Go
standard library and runtime (BSD-3-Clause, https://go.dev/LICENSE) and
the third-party Go modules below, each under its own licence, whose text
is in the module's source at that version. This file is generated from the
module graph: go test ./cmd/slivingdoc -run TestNotice -update-notice

`)
	for _, p := range paths {
		m := seen[p]
		if m.Dir == "" {
			t.Fatalf("%s %s: not in the module cache (go mod download)", m.Path, m.Version)
		}
		var ids []string
		files, _ := filepath.Glob(filepath.Join(m.Dir, "*"))
		for _, f := range files {
			name := strings.ToUpper(filepath.Base(f))
			switch {
			case strings.HasPrefix(name, "NOTICE"):
				n, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&notices, "\n--- %s %s, %s:\n%s", m.Path, m.Version, filepath.Base(f), strings.TrimRight(string(n), "\n")+"\n")
			case strings.Contains(name, "LICENSE") || strings.Contains(name, "LICENCE") || strings.HasPrefix(name, "COPYING"):
				l, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				found := licenceIDs(l)
				if len(found) == 0 {
					t.Fatalf("%s: cannot tell the licence of %s", m.Path, filepath.Base(f))
				}
				ids = append(ids, found...)
			}
		}
		if len(ids) == 0 {
			t.Fatalf("%s %s has no licence file", m.Path, m.Version)
		}
		fmt.Fprintf(&b, "%s %s: %s\n", m.Path, m.Version, strings.Join(unique(ids), " AND "))
	}
	if notices.Len() > 0 {
		b.WriteString("\nThe NOTICE files of those modules, as their Apache licences ask:\n")
		b.WriteString(notices.String())
	}
	return []byte(b.String())
}

// licenceIDs names the licences whose text is in b, by their SPDX ids, in
// the order they appear.
func licenceIDs(b []byte) []string {
	type mark struct {
		id string
		re *regexp.Regexp
	}
	marks := []mark{
		{"Apache-2.0", regexp.MustCompile(`Apache License\s+Version 2\.0`)},
		{"MIT", regexp.MustCompile(`Permission is hereby granted, free of charge`)},
		{"BSD-3-Clause", regexp.MustCompile(`Redistribution and use in source and binary forms(?s:.{0,1000})(Neither the name|names of its\s+contributors)`)},
		{"BSD-2-Clause", regexp.MustCompile(`Redistribution and use in source and binary forms`)},
		{"CC0-1.0", regexp.MustCompile(`CC0 1\.0 Universal`)},
	}
	type hit struct {
		at int
		id string
	}
	var hits []hit
	bsd3 := false
	for _, m := range marks {
		for _, loc := range m.re.FindAllIndex(b, -1) {
			if m.id == "BSD-3-Clause" {
				bsd3 = true
			}
			if m.id == "BSD-2-Clause" && bsd3 {
				break
			}
			hits = append(hits, hit{loc[0], m.id})
		}
	}
	sort.Slice(hits, func(i, j int) bool { return hits[i].at < hits[j].at })
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.id
	}
	return unique(ids)
}

func unique(s []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
