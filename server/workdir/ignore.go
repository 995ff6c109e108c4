package workdir

import (
	"bytes"
	"fmt"
	"path"
	"strings"

	"github.com/slivingdoc/slivingdoc/internal/noinit"
)

// Ignore rules (DESIGN §6, docs/operations.md "What is not part of the
// notebook"). A rule set is compiled once per engine into Ignore; the
// scan asks it about every directory entry, before the stat cache, so a
// rule added since the last call takes effect at once.
//
// Glob semantics (a small subset of gitignore's, documented in docs/):
//   - A pattern without '/' (other than a trailing one) matches the name
//     of a file or directory at any depth: `*.png`, `.DS_Store`.
//   - A pattern with a '/' inside is matched against the whole
//     notebook-relative path: `drafts/*.md` matches drafts/a.md only, a
//     leading '/' is allowed and means the same (`/build`).
//   - `*` matches any run of characters within one name, `?` one
//     character, `[...]` a class (as path.Match); `**` as a whole segment
//     matches zero or more directories (`**/tmp`, `logs/**`).
//   - A trailing '/' matches directories only (`cache/`).
//   - An ignored directory is not descended: everything below it is
//     ignored. Matching is case-sensitive. There is no negation ('!').
//   - A pattern, or the set, that would leave out every file at the top
//     or every file in every directory is refused (leavesOut): it would
//     only make every notebook look empty.
//
// Matching costs one or two byte lookups for most names: the common
// patterns compile to literal/prefix/suffix tests, and a name whose first
// and last bytes no such pattern can start or end with is passed at once.

// DefaultIgnores are the well-known OS and editor droppings the notebook
// leaves out unless --no-default-ignores is given.
var DefaultIgnores = []string{".DS_Store", "._*", "Thumbs.db", "desktop.ini", "*.swp", "*.swo", "*~", "#*#", ".#*"}

type globKind uint8

const (
	globExact  globKind = iota // name == lit
	globPrefix                 // strings.HasPrefix(name, lit)
	globSuffix                 // strings.HasSuffix(name, lit2)
	globBoth                   // prefix lit and suffix lit2, not overlapping
	globMatch                  // path.Match(pattern, name)
)

// nameGlob is one compiled pattern for a single name.
type nameGlob struct {
	kind      globKind
	lit, lit2 string
	pattern   string // for globMatch
}

func (g nameGlob) match(name string) bool {
	switch g.kind {
	case globExact:
		return name == g.lit
	case globPrefix:
		return strings.HasPrefix(name, g.lit)
	case globSuffix:
		return strings.HasSuffix(name, g.lit2)
	case globBoth:
		return len(name) >= len(g.lit)+len(g.lit2) && strings.HasPrefix(name, g.lit) && strings.HasSuffix(name, g.lit2)
	}
	ok, _ := path.Match(g.pattern, name)
	return ok
}

func compileName(p string) nameGlob {
	if !strings.ContainsAny(p, "*?[\\") {
		return nameGlob{kind: globExact, lit: p}
	}
	if i := strings.IndexByte(p, '*'); i >= 0 && !strings.ContainsAny(p, "?[\\") && strings.Count(p, "*") == 1 {
		pre, suf := p[:i], p[i+1:]
		switch {
		case suf == "":
			return nameGlob{kind: globPrefix, lit: pre}
		case pre == "":
			return nameGlob{kind: globSuffix, lit2: suf}
		default:
			return nameGlob{kind: globBoth, lit: pre, lit2: suf}
		}
	}
	return nameGlob{kind: globMatch, pattern: p}
}

// ignoreRule is one pattern: a name rule, or an anchored path rule split
// into segments ("**" kept as a segment).
type ignoreRule struct {
	name    nameGlob   // when !anchored
	segs    []nameGlob // when anchored
	double  []bool     // segs[i] is "**"
	lead    string     // the literal first segment and '/', "" when not literal
	dirOnly bool
}

// Ignore is the compiled rule set of an engine. The zero value (and
// nil) ignores nothing.
type Ignore struct {
	patterns   []string // as configured (--ignore), for the surfaces
	defaults   bool     // the built-in set is in force
	names      []ignoreRule
	anchored   []ignoreRule
	anyName    bool      // some name rule has no usable first/last byte
	anyLead    bool      // some anchored rule does not start with a literal segment
	first      [256]bool // a name rule that needs only its first byte may match a name starting with this byte
	last       [256]bool // ... one that needs only its last byte, a name ending with it
	dirRules   bool      // some rule is directory-only
	fileFilter bool      // false: no rule at all
	// A rule that needs both bytes (an exact name, a prefix with a
	// suffix) may match a name that starts with a byte of bothFirst and
	// ends with one of bothLast: `desktop.ini` alone does not make every
	// name starting with 'd' (drafts/, d042/) a candidate at every depth.
	bothFirst, bothLast [256]bool
}

// NewIgnore validates and compiles the configured patterns plus, with
// defaults, the built-in set. Its errors are configuration errors.
func NewIgnore(patterns []string, defaults bool) (*Ignore, error) {
	r := &Ignore{defaults: defaults}
	all := patterns
	if defaults {
		all = append(append([]string{}, DefaultIgnores...), patterns...)
	}
	seen := map[string]bool{}
	for _, raw := range patterns {
		p := strings.TrimSpace(raw)
		if !seen[p] {
			seen[p] = true
			r.patterns = append(r.patterns, p)
		}
	}
	for _, raw := range all {
		p := strings.TrimSpace(raw)
		if err := r.add(p); err != nil {
			return nil, fmt.Errorf("server: ignore pattern %q: %w", raw, err)
		}
		// Each pattern alone first, so the error names the one at fault.
		one := &Ignore{}
		if err := one.add(p); err != nil {
			return nil, fmt.Errorf("server: ignore pattern %q: %w", raw, err)
		}
		if what := one.leavesOut(); what != "" {
			return nil, fmt.Errorf("server: ignore pattern %q would leave out %s; name what to leave out (e.g. '*.png', 'drafts/')", raw, what)
		}
	}
	if len(all) > 1 {
		if what := r.leavesOut(); what != "" {
			with := ""
			if defaults {
				with = " with the built-in set"
			}
			return nil, fmt.Errorf("server: the ignore patterns '%s'%s together would leave out %s", strings.Join(r.patterns, "', '"), with, what)
		}
	}
	return r, nil
}

// probeNames are the names leavesOut tries: every printable ASCII
// character a name may hold, as a one-character name, a few letters of
// other scripts, and a few ordinary longer names. A glob that matches all
// of them holds no literal and only classes that admit every character
// tried, so it matches every name a user is likely to write. Built on the
// first rule set checked, not at package init.
func probeNames() []string { return probeNamesOnce.Get(makeProbeNames) }

var probeNamesOnce noinit.Lazy[[]string]

func makeProbeNames() []string {
	var names []string
	for c := byte('!'); c <= '~'; c++ {
		names = append(names, string(c))
	}
	names = append(names, "é", "ß", "Ω", "я", "日", "😀", "notes.md", ".hidden", "a b", "README", "x.y.z")
	valid := names[:0]
	for _, n := range names {
		if nameReason(n) == "" {
			valid = append(valid, n)
		}
	}
	return valid
}

// leavesOut says what r would leave out of every notebook, "" when it
// keeps something: every file at the top (`*`, `**`, `/*`, `**/*`), or
// every file in every directory (`*/`, `*/*`, `*/**`). Such a rule set
// makes every notebook look empty, and every pull or commit that follows
// would publish or receive nothing without saying why, so it is refused
// as a configuration error rather than obeyed.
func (r *Ignore) leavesOut() string {
	root := r.rootStates()
	if !r.keepsAFile(root) {
		return "every file at the top of the notebook"
	}
	if !r.dirKeepsAFile(root, 1) {
		return "every file in every directory of the notebook"
	}
	return ""
}

// keepsAFile reports whether some probe name, as a file in a directory
// with states st, is not ignored.
func (r *Ignore) keepsAFile(st dirStates) bool {
	for _, n := range probeNames() {
		if ign, _ := r.matchEntry(st, n, false); !ign {
			return true
		}
	}
	return false
}

// dirKeepsAFile reports whether some probe name, as a directory in a
// directory with states st, is not ignored and keeps a file, directly or
// (depth > 0) in a directory of its own.
func (r *Ignore) dirKeepsAFile(st dirStates, depth int) bool {
	for _, n := range probeNames() {
		ign, below := r.matchEntry(st, n, true)
		if ign {
			continue
		}
		if r.keepsAFile(below) || depth > 0 && r.dirKeepsAFile(below, depth-1) {
			return true
		}
	}
	return false
}

func (r *Ignore) add(p string) error {
	switch {
	case p == "" || p == "/":
		return fmt.Errorf("empty pattern")
	case strings.HasPrefix(p, "!"):
		return fmt.Errorf("negation ('!') is not supported")
	case strings.ContainsRune(p, '\\'):
		return fmt.Errorf("write '/' between names; '\\' is not allowed")
	}
	rule := ignoreRule{}
	if strings.HasSuffix(p, "/") {
		rule.dirOnly = true
		p = strings.TrimSuffix(p, "/")
	}
	r.fileFilter = true
	r.dirRules = r.dirRules || rule.dirOnly
	anchored := strings.Contains(p, "/")
	p = strings.TrimPrefix(p, "/")
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("empty, '.' or '..' segment")
		}
		if strings.Contains(seg, "**") && seg != "**" {
			return fmt.Errorf("'**' must be a whole segment")
		}
		if _, err := path.Match(seg, ""); err != nil {
			return fmt.Errorf("malformed pattern")
		}
	}
	if !anchored {
		rule.name = compileName(p)
		r.names = append(r.names, rule)
		// The byte tables need a literal to index; a pattern without one
		// (`*`, refused later as ignoring everything, but compiled first)
		// falls back to testing every name rather than indexing "".
		switch g := rule.name; {
		case g.kind == globExact:
			r.bothFirst[g.lit[0]], r.bothLast[g.lit[len(g.lit)-1]] = true, true
		case g.kind == globBoth && g.lit != "" && g.lit2 != "":
			r.bothFirst[g.lit[0]], r.bothLast[g.lit2[len(g.lit2)-1]] = true, true
		case (g.kind == globPrefix || g.kind == globBoth) && g.lit != "":
			r.first[g.lit[0]] = true
		case g.kind == globSuffix && g.lit2 != "":
			r.last[g.lit2[len(g.lit2)-1]] = true
		default:
			r.anyName = true
		}
		return nil
	}
	segs := strings.Split(p, "/")
	if len(segs) > 62 {
		return fmt.Errorf("more than 62 segments")
	}
	for _, seg := range segs {
		rule.segs = append(rule.segs, compileName(seg))
		rule.double = append(rule.double, seg == "**")
	}
	if !rule.double[0] && rule.segs[0].kind == globExact {
		rule.lead = rule.segs[0].lit + "/"
	} else {
		r.anyLead = true
	}
	r.anchored = append(r.anchored, rule)
	return nil
}

// Patterns returns the configured (non-default) patterns.
func (r *Ignore) Patterns() []string {
	if r == nil {
		return nil
	}
	return append([]string{}, r.patterns...)
}

// Empty reports whether nothing is ever ignored.
func (r *Ignore) Empty() bool { return r == nil || !r.fileFilter }

// dirStates is where each anchored rule stands after a directory's path:
// bit i of states[k] set means rule k has matched its first i segments.
// The scan passes it down the walk, so an entry is tested against the
// next segments only (no path is built or split), and a rule that cannot
// match below a directory costs nothing there.
type dirStates []uint64

// rootStates is the states of the notebook's top directory.
func (r *Ignore) rootStates() dirStates {
	if r == nil || len(r.anchored) == 0 {
		return nil
	}
	st := make(dirStates, len(r.anchored))
	for k := range r.anchored {
		st[k] = r.anchored[k].closure(1)
	}
	return st
}

// closure adds, for each "**" position reached, the position after it
// ("**" matches zero segments).
func (a *ignoreRule) closure(set uint64) uint64 {
	for i := range a.segs {
		if set&(1<<i) != 0 && a.double[i] {
			set |= 1 << (i + 1)
		}
	}
	return set
}

// step consumes one path segment.
func (a *ignoreRule) step(set uint64, name string) uint64 {
	var next uint64
	for i := range a.segs {
		if set&(1<<i) == 0 {
			continue
		}
		if a.double[i] {
			next |= 1 << i // "**" consumes it and stays
		} else if a.segs[i].match(name) {
			next |= 1 << (i + 1)
		}
	}
	return a.closure(next)
}

// matchEntry reports whether the directory entry name, in a directory whose
// anchored-rule states are st, is ignored; dir says it is a directory. It
// also returns the states below it (for a directory that is not ignored).
// Only the entry itself is tested: the scan never descends into an
// ignored directory.
func (r *Ignore) matchEntry(st dirStates, name string, dir bool) (bool, dirStates) {
	if r == nil || !r.fileFilter || name == "" {
		return false, nil
	}
	if r.anyName || r.mayMatchName(name[0], name[len(name)-1]) {
		for i := range r.names {
			n := &r.names[i]
			if (!n.dirOnly || dir) && n.name.match(name) {
				return true, nil
			}
		}
	}
	if len(st) == 0 {
		return false, nil
	}
	var below dirStates
	live := false
	for k, set := range st {
		if set == 0 {
			continue
		}
		a := &r.anchored[k]
		next := a.step(set, name)
		if next&(1<<len(a.segs)) != 0 && (!a.dirOnly || dir) {
			return true, nil
		}
		if dir && next != 0 {
			if below == nil {
				below = make(dirStates, len(st))
			}
			below[k] = next
			live = true
		}
	}
	if !live {
		below = nil
	}
	return false, below
}

// mayMatchName reports whether a name rule may match a name with these
// first and last bytes (false: none can).
func (r *Ignore) mayMatchName(first, last byte) bool {
	return r.first[first] || r.last[last] || r.bothFirst[first] && r.bothLast[last]
}

// MatchPath reports whether the notebook path p (of a file) is ignored:
// the file itself or any directory above it.
func (r *Ignore) MatchPath(p string) bool {
	if r == nil || !r.fileFilter {
		return false
	}
	st := r.rootStates()
	start := 0
	for {
		i := strings.IndexByte(p[start:], '/')
		if i < 0 {
			ign, _ := r.matchEntry(st, p[start:], false)
			return ign
		}
		ign, below := r.matchEntry(st, p[start:start+i], true)
		if ign {
			return true
		}
		st = below
		start += i + 1
	}
}

// MayMatchBytes is a cheap filter for MatchPath: false means no rule can
// match p (no name in it starts or ends with the bytes a name rule needs,
// and there are no rules that need more).
func (r *Ignore) MayMatchBytes(p []byte) bool {
	if r.Empty() {
		return false
	}
	if r.anyName || r.anyLead {
		return true
	}
	for i := range r.anchored {
		lead := r.anchored[i].lead // "build/": the path build/... or the file build
		if bytes.HasPrefix(p, []byte(lead)) || string(p) == lead[:len(lead)-1] {
			return true
		}
	}
	start := 0
	for i := 0; i <= len(p); i++ {
		if i == len(p) || p[i] == '/' {
			if i > start && r.mayMatchName(p[start], p[i-1]) {
				return true
			}
			start = i + 1
		}
	}
	return false
}
