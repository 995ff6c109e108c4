package main

// No result and no log line of the MCP suite may carry a secret, an object
// ID, a pack or probe key, URL user info or the private root. The harness
// calls checkNoLeak on every result text, every structured object and every
// stderr line of every server it starts; the tests below prove the scanner
// sees each kind of leak and drive the errors most likely to leak.

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/remote"
)

// Planted into every server's environment: a file-store server never
// needs them, so they can only surface through a leak.
const (
	plantedAccessKey = "AKIAQWERTYUIOPASDFGH"
	plantedSecret    = "pLaNtEdSeCrEt/wJalrXUtnFEMI/K7MDENG+bPxRfiCY"
)

// serveEnv is the environment of a server process: the agent's, plus the
// planted credentials unless the backend brought real ones (SeaweedFS).
func serveEnv(base []string) []string {
	env := append([]string{}, base...)
	for _, kv := range base {
		if strings.HasPrefix(kv, "AWS_SECRET_ACCESS_KEY=") {
			return env
		}
	}
	return append(env, "AWS_ACCESS_KEY_ID="+plantedAccessKey, "AWS_SECRET_ACCESS_KEY="+plantedSecret)
}

// forbiddenIn lists the literal strings no output of a server with env and
// private root priv may contain: the private root and the secret key.
func forbiddenIn(env []string, priv string) []string {
	out := []string{priv}
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "AWS_SECRET_ACCESS_KEY="); ok && v != "" {
			out = append(out, v)
		}
	}
	return out
}

var diagnosticIDPattern = regexp.MustCompile(`^[0-9a-f]{16}$`)

var leakPatterns = map[string]*regexp.Regexp{
	"object ID (40/64 hex)": regexp.MustCompile(`[0-9A-Fa-f]{40,}`),
	"pack key":              regexp.MustCompile(`packs/(?:checkpoints|increments)/`),
	"probe key":             regexp.MustCompile(`probe/[0-9a-f]{8}-`),
	"AWS access key ID":     regexp.MustCompile(`\b(?:AKIA|ASIA)[A-Z0-9]{16}\b`),
	"URL user info":         regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^/\s@]+@`),
}

// leaks lists what s reveals.
func leaks(s string, forbidden []string) []string {
	var out []string
	for name, re := range leakPatterns {
		if re.MatchString(s) {
			out = append(out, name)
		}
	}
	for _, f := range forbidden {
		if f != "" && strings.Contains(s, f) {
			out = append(out, "private root or secret "+strconv.Quote(f))
		}
	}
	return out
}

func checkNoLeak(t *testing.T, what, s string, forbidden []string) {
	t.Helper()
	if l := leaks(s, forbidden); len(l) > 0 {
		t.Errorf("%s leaks %v:\n%s", what, l, s)
	}
}

// The scanner must be able to fail: each planted leak is found.
func TestMCPLeakScannerFindsEachKind(t *testing.T) {
	priv := "/home/u/.cache/slivingdoc"
	forbidden := forbiddenIn(serveEnv(nil), priv)
	for _, s := range []string{
		"object 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		"commit 0123456789abcdef0123456789abcdef01234567",
		"get packs/increments/7-0190f1a2-7c3b-7def-8abc-0123456789ab.pack",
		"put probe/0190f1a2-7c3b-7def-8abc-0123456789ab",
		"key " + plantedAccessKey,
		"secret " + plantedSecret,
		"endpoint https://user:pw@example.com",
		"state under " + priv + "/dirs",
	} {
		if len(leaks(s, forbidden)) == 0 {
			t.Errorf("scanner misses the leak in %q", s)
		}
	}
	if l := leaks("CONTENT_CONFLICT · MERGE_CONFLICT\ndiagnosticId: 0011223344556677\nfile: notes/a.md · TEXT_CONFLICT · lines 1-5", forbidden); len(l) > 0 {
		t.Errorf("false positive %v", l)
	}
}

// A workload that exercises success and the errors whose causes carry
// keys, IDs and private paths (missing and corrupt packs, a corrupt
// manifest, a corrupt cache), with a debug-free default log level. The
// harness scans every result and stderr line; this test adds the store's
// own key names to the forbidden strings.
func TestMCPResultsAndLogsLeakNothing(t *testing.T) {
	nb := newNotebook(t, backends[0])
	store := strings.TrimPrefix(nb.env[0], "SLIVINGDOC_STORE=file://")
	a := nb.agent("a")
	s := a.serve()
	s.pull()
	a.write("notes/a.md", "one\ntwo\n")
	s.commit("first")
	a.write("notes/a.md", "one\ntwo\nthree\n")
	s.commit("second")
	s.call(ToolCommitName, map[string]any{"message": " "})
	s.call(ToolPullName, map[string]any{"path": "/"})

	// Every pack key of the store is a forbidden string too.
	var keys []string
	for _, p := range packFiles(t, store) {
		keys = append(keys, strings.TrimSuffix(filepath.Base(p), ".pack"))
	}
	// A second agent with a fresh cache pulls through a damaged store.
	b := nb.agent("b")
	sb := b.serve()
	for _, p := range packFiles(t, store) {
		if err := os.WriteFile(p, []byte("garbage"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := sb.call(ToolPullName, map[string]any{})
	if !r.isError {
		t.Fatalf("pull through corrupt packs succeeded:\n%s", r.text)
	}
	for _, text := range []string{r.text, r.raw, sb.stderr.String(), s.stderr.String()} {
		for _, k := range keys {
			if strings.Contains(text, k) {
				t.Errorf("store key %s leaked:\n%s", k, text)
			}
		}
	}
}

// packFiles lists the pack objects of a file store: the packs, and the
// proposals (format 4: each holds an accepted commit's pack).
func packFiles(t *testing.T, store string) []string {
	t.Helper()
	var out []string
	_ = filepath.Walk(store, func(p string, fi os.FileInfo, err error) error {
		if err != nil || !fi.Mode().IsRegular() {
			return nil
		}
		kind, _, _, _, _ := remote.ParseProposalEntry(remote.ProposalsPrefix + filepath.Base(p))
		if strings.HasSuffix(p, ".pack") || filepath.Base(filepath.Dir(p)) == "proposals" && kind == remote.EntryProposal {
			out = append(out, p)
		}
		return nil
	})
	if len(out) == 0 {
		t.Fatalf("no pack files under %s", store)
	}
	return out
}
