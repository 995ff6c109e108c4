// Package secrets recognises credentials in the lines a commit adds, so the
// notebook never replicates a pasted key to every agent and into a bucket
// (DESIGN §6 "Secrets"; the rule set and its sources are in
// docs/secrets.md).
//
// Design:
//
//	Added(old, new) ─ lines of new that old lacks (a multiset difference:
//	                  a moved or unchanged line is not added)
//	                ─ per added line: a cheap literal prefilter, then each
//	                  Rule's pattern ─▶ []Finding{Rule, Start, End}
//
// Rules are curated and high-confidence only: each matches a published,
// prefixed token format (or, for AWS, an access key ID with a 40-character
// secret within a few lines), bounded on both sides so a token inside a
// longer word does not count, and with a placeholder check (a token body of
// few distinct characters, such as XXXX… or 0000…, is an example, not a
// key). A Finding names the rule and lines only: the matched text never
// leaves this package, so no error, log record or report can carry it.
//
// The package knows nothing of the notebook; server/rules decides which
// files and lines to pass, and server how to report.
package secrets

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Finding is one recognised credential: the rule and the one-based,
// inclusive line range in the new content.
type Finding struct {
	Rule  string
	Start int
	End   int
}

// Rule is one curated credential format.
type Rule struct {
	Name   string // stable identifier, e.g. "github-token"
	Title  string // what it is, for people
	Source string // where the format is published
	// anchors: literal substrings one of which every match contains (the
	// prefilter); pattern: submatch 1 is the token.
	anchors []string
	pattern *lazyRegexp
	// minDistinct: fewer distinct bytes in the token's body (after
	// bodyFrom) means a placeholder.
	minDistinct int
	bodyFrom    int
	// near: an AWS key ID counts only with its secret within nearLines.
	near bool
}

// nearLines is how far from an AWS access key ID its secret may be.
const nearLines = 5

// Rules is the curated set, in report order.
var Rules = []Rule{
	{
		Name: "aws-access-key", Title: "AWS access key ID with its secret access key nearby",
		Source:  "https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_identifiers.html#identifiers-unique-ids",
		anchors: []string{"AKIA", "ASIA", "ABIA", "ACCA"},
		pattern: lazy(`(?:^|[^A-Za-z0-9])((?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})(?:[^A-Za-z0-9]|$)`),
		near:    true,
	},
	{
		Name: "github-token", Title: "GitHub personal access, OAuth, app or refresh token",
		Source:      "https://github.blog/engineering/platform-security/behind-githubs-new-authentication-token-formats/",
		anchors:     []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"},
		pattern:     lazy(`(?:^|[^A-Za-z0-9_])((?:gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{82}))(?:[^A-Za-z0-9_]|$)`),
		minDistinct: 10, bodyFrom: 4,
	},
	{
		Name: "gitlab-token", Title: "GitLab personal, OAuth, deploy, runner or trigger token",
		Source:      "https://docs.gitlab.com/security/tokens/#token-prefixes",
		anchors:     []string{"glpat-", "gloas-", "gldt-", "glrt-", "glptt-", "glcbt-", "glsoat-", "glffct-"},
		pattern:     lazy(`(?:^|[^A-Za-z0-9_-])((?:glpat|gloas|gldt|glrt|glptt|glcbt|glsoat|glffct)-[A-Za-z0-9_-]{20,})(?:[^A-Za-z0-9_-]|$)`),
		minDistinct: 10, bodyFrom: 5,
	},
	{
		Name: "slack-token", Title: "Slack bot, user, app or configuration token, or incoming webhook URL",
		Source:      "https://api.slack.com/authentication/token-types",
		anchors:     []string{"xox", "xapp-", "hooks.slack.com/"},
		pattern:     lazy(`(?:^|[^A-Za-z0-9_-])(xox[abposre]-[0-9]{6,}-[0-9A-Za-z-]{10,}|xapp-[0-9]-[A-Z0-9]{6,}-[0-9]{6,}-[A-Za-z0-9]{32,}|https://hooks\.slack\.com/(?:services|workflows|triggers)/T[A-Z0-9]{6,}/[A-Z0-9]{6,}/[A-Za-z0-9]{16,})(?:[^A-Za-z0-9_-]|$)`),
		minDistinct: 10, bodyFrom: 5,
	},
	{
		Name: "stripe-live-key", Title: "Stripe live secret or restricted key",
		Source:      "https://docs.stripe.com/keys",
		anchors:     []string{"sk_live_", "rk_live_"},
		pattern:     lazy(`(?:^|[^A-Za-z0-9_])((?:sk|rk)_live_[0-9A-Za-z]{24,})(?:[^A-Za-z0-9_]|$)`),
		minDistinct: 10, bodyFrom: 8,
	},
	{
		Name: "openai-api-key", Title: "OpenAI API key (project, service account, admin or legacy user key)",
		Source:      "https://platform.openai.com/docs/api-reference/authentication",
		anchors:     []string{"sk-"},
		pattern:     lazy(`(?:^|[^A-Za-z0-9_-])(sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}|[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}))(?:[^A-Za-z0-9_-]|$)`),
		minDistinct: 10, bodyFrom: 3,
	},
	{
		Name: "anthropic-api-key", Title: "Anthropic API or admin key",
		Source:      "https://docs.anthropic.com/en/api/overview#authentication",
		anchors:     []string{"sk-ant-"},
		pattern:     lazy(`(?:^|[^A-Za-z0-9_-])(sk-ant-(?:api|admin)[0-9]{2}-[A-Za-z0-9_-]{80,})(?:[^A-Za-z0-9_-]|$)`),
		minDistinct: 10, bodyFrom: 14,
	},
	{
		Name: "google-api-key", Title: "Google API key",
		Source:      "https://cloud.google.com/docs/authentication/api-keys",
		anchors:     []string{"AIza"},
		pattern:     lazy(`(?:^|[^A-Za-z0-9_-])(AIza[0-9A-Za-z_-]{35})(?:[^A-Za-z0-9_-]|$)`),
		minDistinct: 10, bodyFrom: 4,
	},
	{
		Name: "pem-private-key", Title: "PEM private key block (RSA, EC, DSA, OpenSSH, PKCS #8, encrypted or PGP)",
		Source:  "https://www.rfc-editor.org/rfc/rfc7468#section-10",
		anchors: []string{"-----BEGIN "},
		pattern: pemBegin,
	},
}

var (
	pemBegin = lazy(`^\s*(-----BEGIN ((?:RSA |DSA |EC |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?)-----)\s*$`)
	pemBody  = lazy(`^\s*[A-Za-z0-9+/=]{16,}\s*$`)
	// awsSecret: 40 characters of the base64 alphabet, not inside a
	// longer run; mixed case and a digit (a hex digest is not one).
	awsSecret = lazy(`(?:^|[^A-Za-z0-9/+])([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)`)
)

// lazyRegexp is a pattern compiled on first use: most added lines pass no
// rule's prefilter, and a CLI process (one commit, then exit) would
// otherwise compile every pattern at start-up for nothing (0.3 ms and 1,100
// allocations per process, before main).
type lazyRegexp struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

func lazy(expr string) *lazyRegexp { return &lazyRegexp{expr: expr} }

// get returns the compiled pattern; an invalid expression panics, as
// regexp.MustCompile does (TestEachFormatIsFound reaches every pattern).
func (l *lazyRegexp) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.expr) })
	return l.re
}

// Added returns the credentials that the lines of new which old lacks
// make or complete (old nil: every line is added), ordered by line.
//
// A credential is read with the lines around it: an AWS key ID and its
// secret on nearby lines, a PEM block from BEGIN to END. It counts when
// any line it is made of is added, so one completed across commits (the
// key ID accepted earlier, its secret added now; BEGIN and body earlier,
// END now) is found, while one whose lines were all accepted earlier does
// not block a commit that adds other lines around it.
func Added(old, new []byte) []Finding {
	if appendedClean(old, new) {
		return nil
	}
	return addedByLines(old, new)
}

// addedByLines is Added, comparing every line of both versions.
func addedByLines(old, new []byte) []Finding {
	lines := splitLines(new)
	added := addedLines(old, lines)
	// Without a BEGIN line anywhere no PEM block can hold an added line,
	// and the context is the AWS pair's few lines: most commits.
	back := nearLines
	if bytes.Contains(new, []byte(pemMarker)) {
		back = maxPEMLines
	}
	window := contextOf(added, back)
	var out []Finding
	for i, line := range lines {
		if !window[i] {
			continue
		}
		for ri := range Rules {
			r := &Rules[ri]
			if !hasAnchor(line, r.anchors) {
				continue
			}
			if f, ok := r.find(lines, i, added); ok {
				out = append(out, f)
			}
		}
	}
	return out
}

// contextOf marks the lines a credential holding an added line may start
// on: an added line, up to back lines before it (an AWS key ID above its
// added secret, within nearLines; a PEM block whose BEGIN line was
// accepted earlier and whose body or END line is added now, within
// maxPEMLines), and up to nearLines after it (an AWS key ID below its
// added secret).
func contextOf(added []bool, back int) []bool {
	window := make([]bool, len(added))
	reach := 0 // lines still to mark, walking up from the last added line
	for a := len(added) - 1; a >= 0; a-- {
		if added[a] {
			reach = back + 1
		}
		if reach > 0 {
			window[a] = true
			reach--
		}
	}
	last := -1
	for a := range added {
		if added[a] {
			last = a
		}
		if last >= 0 && a-last <= nearLines {
			window[a] = true
		}
	}
	return window
}

// Scan returns every credential in content.
func Scan(content []byte) []Finding { return Added(nil, content) }

func hasAnchor(line []byte, anchors []string) bool {
	for _, a := range anchors {
		if bytes.Contains(line, []byte(a)) {
			return true
		}
	}
	return false
}

// find applies r to line i (zero-based) of lines: a finding counts when
// one of the lines it is made of is added.
func (r *Rule) find(lines [][]byte, i int, added []bool) (Finding, bool) {
	line := lines[i]
	if r.pattern == pemBegin {
		f, ok := pemBlock(r.Name, lines, i)
		if !ok {
			return Finding{}, false
		}
		for j := f.Start - 1; j < f.End; j++ {
			if added[j] {
				return f, true
			}
		}
		return Finding{}, false
	}
	for _, m := range r.pattern.get().FindAllSubmatchIndex(line, -1) {
		tok := line[m[2]:m[3]]
		if r.minDistinct > 0 && distinct(tok[min(r.bodyFrom, len(tok)):]) < r.minDistinct {
			continue // a placeholder
		}
		if !r.near {
			if !added[i] {
				return Finding{}, false
			}
			return Finding{Rule: r.Name, Start: i + 1, End: i + 1}, true
		}
		if bytes.HasSuffix(tok, []byte("EXAMPLE")) {
			continue // AWS's documented example key
		}
		for j := max(0, i-nearLines); j < min(len(lines), i+nearLines+1); j++ {
			if (added[i] || added[j]) && hasAWSSecret(lines[j]) {
				return Finding{Rule: r.Name, Start: min(i, j) + 1, End: max(i, j) + 1}, true
			}
		}
	}
	return Finding{}, false
}

// Placeholder replaces a credential in a name that is reported (Redact).
const Placeholder = "[secret]"

// Redact replaces every credential in one line of text (a file or
// directory name) by Placeholder; found is false when there is none. An
// AWS key ID counts with its secret on the same line, and both are
// replaced. PEM blocks span lines and cannot be in a name.
func Redact(text string) (redacted string, found bool) {
	line := []byte(text)
	var spans [][2]int
	for ri := range Rules {
		r := &Rules[ri]
		if r.pattern == pemBegin || !hasAnchor(line, r.anchors) {
			continue
		}
		for _, m := range r.pattern.get().FindAllSubmatchIndex(line, -1) {
			tok := line[m[2]:m[3]]
			if r.minDistinct > 0 && distinct(tok[min(r.bodyFrom, len(tok)):]) < r.minDistinct {
				continue
			}
			if r.near {
				if bytes.HasSuffix(tok, []byte("EXAMPLE")) || !hasAWSSecret(line) {
					continue
				}
				spans = append(spans, awsSecretSpans(line)...)
			}
			spans = append(spans, [2]int{m[2], m[3]})
		}
	}
	if len(spans) == 0 {
		return text, false
	}
	// Merge overlapping spans, then replace from the start.
	slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
	var b strings.Builder
	at := 0
	for _, sp := range spans {
		if sp[1] <= at {
			continue
		}
		if sp[0] >= at {
			b.WriteString(text[at:sp[0]])
			b.WriteString(Placeholder)
		}
		at = sp[1]
	}
	b.WriteString(text[at:])
	return b.String(), true
}

// awsSecretSpans are the spans of the secret access keys on line.
func awsSecretSpans(line []byte) [][2]int {
	var out [][2]int
	for _, m := range awsSecret.get().FindAllSubmatchIndex(line, -1) {
		if hasAWSSecret(line[m[2]:m[3]]) {
			out = append(out, [2]int{m[2], m[3]})
		}
	}
	return out
}

func hasAWSSecret(line []byte) bool {
	for _, m := range awsSecret.get().FindAllSubmatchIndex(line, -1) {
		s := line[m[2]:m[3]]
		if bytes.Contains(s, []byte("EXAMPLE")) || distinct(s) < 10 {
			continue
		}
		var upper, lower, digit bool
		for _, c := range s {
			switch {
			case 'A' <= c && c <= 'Z':
				upper = true
			case 'a' <= c && c <= 'z':
				lower = true
			case '0' <= c && c <= '9':
				digit = true
			}
		}
		if upper && lower && digit {
			return true
		}
	}
	return false
}

// maxPEMLines bounds the search for a block's END line (a 16 kbit RSA key
// is about 200 lines).
const maxPEMLines = 400

// pemBlock recognises a private key block starting at line i: the BEGIN
// line, base64 body lines (RFC 1421 headers and blank lines allowed), and
// the END line with the same label; at least one body line.
func pemBlock(rule string, lines [][]byte, i int) (Finding, bool) {
	m := pemBegin.get().FindSubmatch(lines[i])
	if m == nil {
		return Finding{}, false
	}
	end := []byte("-----END " + string(m[2]) + "-----")
	body := 0
	for j := i + 1; j < len(lines) && j <= i+maxPEMLines; j++ {
		l := bytes.TrimSpace(lines[j])
		switch {
		case bytes.Equal(l, end):
			if body == 0 {
				return Finding{}, false
			}
			return Finding{Rule: rule, Start: i + 1, End: j + 1}, true
		case pemBody.get().Match(l):
			body++
		case len(l) == 0 || bytes.IndexByte(l, ':') > 0 && body == 0:
			// a blank line or a header (Proc-Type:, Comment:) before the body
		default:
			return Finding{}, false
		}
	}
	return Finding{}, false
}

func distinct(b []byte) int {
	var seen [256]bool
	n := 0
	for _, c := range b {
		if !seen[c] {
			seen[c] = true
			n++
		}
	}
	return n
}

// splitLines splits content into lines without their terminators.
func splitLines(content []byte) [][]byte {
	if len(content) == 0 {
		return nil
	}
	lines := bytes.Split(content, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		lines[i] = bytes.TrimSuffix(l, []byte("\r"))
	}
	return lines
}

// addedLines marks the lines of new that old does not hold (counting
// repeats: a line old has twice may appear twice without being added).
func addedLines(old []byte, lines [][]byte) []bool {
	added := make([]bool, len(lines))
	if old == nil {
		for i := range added {
			added[i] = true
		}
		return added
	}
	have := map[string]int{}
	for _, l := range splitLines(old) {
		have[string(l)]++
	}
	for i, l := range lines {
		if n := have[string(l)]; n > 0 {
			have[string(l)] = n - 1
			continue
		}
		added[i] = true
	}
	return added
}
