package diag

import (
	"fmt"
	"log/slog"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/slivingdoc/slivingdoc/internal/noinit"
)

// scrubRules is the scrub policy. The engine already keeps these out of its
// messages; scrubbing them again is defence in depth, because whatever
// reaches a result is read by a model and may be logged by a host we do not
// control. Compiled on the first text scrubbed, not at package init: most
// CLI processes never report an error.
func scrubRules() []scrubRule { return scrubRulesOnce.Get(compileScrubRules) }

var scrubRulesOnce noinit.Lazy[[]scrubRule]

func compileScrubRules() []scrubRule {
	return []scrubRule{
		// URL user information: scheme://user:secret@host -> scheme://host.
		{regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)[^/\s@"'<>]+@`), "$1"},
		// Pack keys, proposal keys (format 4: every commit's pack is in
		// its proposal) and probe keys of the store layout (DESIGN §5).
		{regexp.MustCompile(`packs/(?:checkpoints|increments|groups|rollups)/[A-Za-z0-9._-]+`), "<pack>"},
		{regexp.MustCompile(`proposals/[A-Za-z0-9._-]+`), "<proposal>"},
		{regexp.MustCompile(`probe/[A-Za-z0-9._-]+`), "<probe>"},
		// AWS access key IDs (long-term AKIA, temporary ASIA and the other
		// documented unique-ID prefixes).
		{regexp.MustCompile(`\b(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ABIA|ACCA)[A-Z0-9]{16}\b`), "<access-key>"},
		// Object IDs (64 hex), 40-hex identifiers, and any longer hex run.
		{regexp.MustCompile(`[0-9A-Fa-f]{40,}`), "<id>"},
	}
}

type scrubRule struct {
	re   *regexp.Regexp
	with string
}

// minLiteral: a shorter literal (an unset or tiny variable) would shred
// ordinary words.
const minLiteral = 4

// Scrubber applies the policy and the literal strings registered with it
// (the private root, secret values). It is safe for concurrent use.
type Scrubber struct {
	mu       sync.RWMutex
	literals []string // longest first, so a prefix never pre-empts a longer match
}

// NewScrubber returns a scrubber that also replaces literals.
func NewScrubber(literals ...string) *Scrubber {
	s := &Scrubber{}
	s.Add(literals...)
	return s
}

// Add registers more literals.
func (s *Scrubber) Add(literals ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range literals {
		if len(l) < minLiteral || containsString(s.literals, l) {
			continue
		}
		s.literals = append(s.literals, l)
	}
	sort.Slice(s.literals, func(i, j int) bool { return len(s.literals[i]) > len(s.literals[j]) })
}

func containsString(set []string, s string) bool {
	for _, x := range set {
		if x == s {
			return true
		}
	}
	return false
}

// Text returns t without secrets. A nil scrubber applies the rules only.
func (s *Scrubber) Text(t string) string {
	if s != nil {
		s.mu.RLock()
		for _, l := range s.literals {
			t = strings.ReplaceAll(t, l, "<private>")
		}
		s.mu.RUnlock()
	}
	if !mayMatchRules(t) {
		return t
	}
	for _, r := range scrubRules() {
		t = r.re.ReplaceAllString(t, r.with)
	}
	return t
}

// mayMatchRules is false for a text no rule can match: every match of a
// rule holds a '/' (URL user information, pack and probe keys) or is at
// least 20 bytes long (access key IDs, hex runs). The short texts every
// process scrubs (log attributes such as module=server) then neither run
// nor compile the regular expressions.
func mayMatchRules(t string) bool {
	return len(t) >= 20 || strings.IndexByte(t, '/') >= 0
}

// Record returns r with its message and every attribute scrubbed.
func (s *Scrubber) Record(r slog.Record) slog.Record {
	out := slog.NewRecord(r.Time, r.Level, s.Text(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(s.Attr(a))
		return true
	})
	return out
}

// Attr returns a scrubbed; values that are not strings are rendered to
// strings first when they could carry text (errors, Stringers, any).
func (s *Scrubber) Attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, s.Text(v.String()))
	case slog.KindGroup:
		g := v.Group()
		out := make([]any, len(g))
		for i, x := range g {
			out[i] = s.Attr(x)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, s.Text(err.Error()))
		}
		if st, ok := v.Any().(fmt.Stringer); ok {
			return slog.String(a.Key, s.Text(st.String()))
		}
		return slog.String(a.Key, s.Text(fmt.Sprint(v.Any())))
	}
	return slog.Attr{Key: a.Key, Value: v}
}
