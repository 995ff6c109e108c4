package server

import (
	"os"
	"slices"
	"sort"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/plan"
	"github.com/slivingdoc/slivingdoc/server/workdir"
)

// The engine's side of L. The visible directory's own rules (scan, stat
// cache entries, names, ignore rules, the atomic rewrite of its files)
// live in server/workdir; here is what the operations add to a scan (A's
// virtual files at the paths L ignores, plan.AddVirtual).

// IgnorePatterns returns the configured ignore patterns (--ignore), not
// the built-in set: the surfaces name only what the operator added.
func (e *Engine) IgnorePatterns() []string { return e.ignore.Patterns() }

// scanRules is what a scan leaves out: ignored entries, and (with
// tempsOurs) the temporary files of an interrupted rewrite.
type scanRules struct {
	ignore    *workdir.Ignore
	tempsOurs bool
	listings  *workdir.WatchedListings // nil: remember nothing
}

// scanResult is L as the operations see it.
type scanResult struct {
	files    map[string]cas.ID  // tree L: path → file ID
	stats    *workdir.StatCache // the stat cache to record
	content  map[string][]byte  // files read by this scan
	invalid  []diag.FileError   // every file that breaks the content rules
	temps    []string           // leftover temporary files of a crashed rewrite
	ignored  []string           // entries of L the ignore rules leave out (directories end in '/')
	virtual  map[string]bool    // paths of files that are A's, not read from L (plan.AddVirtual)
	restore  map[string]bool    // virtual paths to write into L at the next rewrite
	withheld []string           // A's paths L does not hold because of a rule (as recorded in P)
	unknown  []string           // withheld paths no rule ignores now, where L holds a file: their base is unknown (server/plan)
	changed  bool               // stats differ from the loaded cache
	byID     map[cas.ID]string  // file ID → one path holding it (built on demand)
	touched  []string           // paths that may differ from stats' IDs at the scan's start (workdir.Listing.Touched)
	markers  []string           // the files of stats holding complete conflict blocks (workdir.Listing.Markers)
}

// scanWithRules is scan under the engine's rules, with the virtual entries
// of the accepted files L leaves out.
func (s *session) scanWithRules() (*scanResult, error) {
	flag, err := s.state.LoadRecovery()
	if err != nil {
		return nil, err
	}
	res, err := scanWith(s.root, s.stats, scanRules{ignore: s.e.ignore, tempsOurs: flag != nil, listings: s.listings()})
	if err != nil {
		return nil, err
	}
	if s.base != nil {
		s.addVirtual(res)
	}
	return res, nil
}

// addVirtual adds A's files at the paths L ignores, and those withheld
// earlier that L still lacks, to res (plan.AddVirtual), and records the
// withheld set when it changed.
func (s *session) addVirtual(res *scanResult) {
	a := plan.Accepted{Baseline: &s.base.Baseline, Ignored: s.base.Ignored, Known: s.base.IgnoredKnown, Learn: s.base.LearnIgnored}
	v := plan.AddVirtual(s.state.Dir, a, s.e.ignore, res.files, func(err error) {
		s.e.log.Warn("cannot record the withheld paths", "err", err)
	})
	res.virtual, res.restore, res.withheld, res.unknown = v.Paths, v.Restore, v.Withheld, v.Unknown
}

// scanWith scans L (workdir.Scan) under rules; the cache becomes the
// result's stats (updated in place, not copied).
func scanWith(root *os.Root, cache *workdir.StatCache, rules scanRules) (*scanResult, error) {
	l, err := workdir.Scan(root, cache, workdir.Rules{Ignore: rules.ignore, TempsOurs: rules.tempsOurs}, rules.listings)
	if err != nil {
		return nil, err
	}
	res := &scanResult{files: l.Files, stats: l.Stats, content: l.Content, temps: l.Temps, ignored: l.Ignored, changed: l.Changed, touched: l.Touched, markers: l.Markers}
	if len(l.Invalid) > 0 {
		res.invalid = make([]diag.FileError, len(l.Invalid))
		for i, r := range l.Invalid {
			res.invalid[i] = diag.FileError{Path: r.Path, Reason: r.Reason}
		}
	}
	return res, nil
}

// pathOf returns a path of L holding file ID id ("" if none).
func (res *scanResult) pathOf(id cas.ID) string {
	if res.byID == nil {
		res.byID = make(map[cas.ID]string, len(res.files))
		for p, fid := range res.files {
			if !res.virtual[p] { // not in L: never re-read from there
				res.byID[fid] = p
			}
		}
	}
	return res.byID[id]
}

// readContent returns content with file ID id that this scan read. The
// scan of a commit usually read a handful of files: they are searched
// directly, without pathOf's map of every path of L (10,000 entries for
// a diffstat that wants one old version, which the object cache holds).
func (res *scanResult) readContent(id cas.ID) ([]byte, bool) {
	if len(res.content) > 64 {
		c, ok := res.content[res.pathOf(id)]
		return c, ok
	}
	for p, c := range res.content {
		if res.files[p] == id {
			return c, true
		}
	}
	return nil, false
}

// markerFiles returns the files of L holding complete conflict blocks.
func (res *scanResult) markerFiles() []string {
	out := slices.Clone(res.markers)
	sort.Strings(out)
	return out
}
