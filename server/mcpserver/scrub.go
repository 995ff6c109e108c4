package mcpserver

import (
	"regexp"
	"sort"
	"strings"
)

// The engine already keeps these out of its messages; scrubbing them again
// here is defence in depth, because whatever reaches a result is read by a
// model and may be logged by a host we do not control.
var scrubRules = []struct {
	re   *regexp.Regexp
	with string
}{
	// URL user information: scheme://user:secret@host -> scheme://host.
	{regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)[^/\s@"'<>]+@`), "$1"},
	// Pack keys and probe keys of the store layout (DESIGN §5).
	{regexp.MustCompile(`packs/(?:checkpoints|increments)/[A-Za-z0-9._-]+`), "<pack>"},
	{regexp.MustCompile(`probe/[A-Za-z0-9._-]+`), "<probe>"},
	// AWS access key IDs (long-term AKIA, temporary ASIA and the other
	// documented unique-ID prefixes).
	{regexp.MustCompile(`\b(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ABIA|ACCA)[A-Z0-9]{16}\b`), "<access-key>"},
	// Object IDs (64 hex), 40-hex identifiers, and any longer hex run.
	{regexp.MustCompile(`[0-9A-Fa-f]{40,}`), "<id>"},
}

// scrubber removes secrets from diagnostic text: the fixed patterns above
// and literal strings of this process (the private root, secret values).
type scrubber struct {
	literals []string // longest first, so a prefix never pre-empts a longer match
}

func newScrubber(literals []string) scrubber {
	var ls []string
	for _, l := range literals {
		if len(l) >= 4 { // a tiny literal would shred ordinary words
			ls = append(ls, l)
		}
	}
	sort.Slice(ls, func(i, j int) bool { return len(ls[i]) > len(ls[j]) })
	return scrubber{literals: ls}
}

func (s scrubber) text(t string) string {
	for _, l := range s.literals {
		t = strings.ReplaceAll(t, l, "<private>")
	}
	for _, r := range scrubRules {
		t = r.re.ReplaceAllString(t, r.with)
	}
	return t
}
