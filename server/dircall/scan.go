package dircall

import (
	"os"
	"slices"
	"sort"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/plan"
	"github.com/slivingdoc/slivingdoc/server/workdir"
)

// The call's side of L. The visible directory's own rules (scan, stat
// cache entries, names, ignore rules, the atomic rewrite of its files)
// live in server/workdir; here is what the operations add to a scan (A's
// virtual files at the paths L ignores, plan.AddVirtual).

// scanRules is what a scan leaves out: ignored entries, and (with
// tempsOurs) the temporary files of an interrupted rewrite.
type scanRules struct {
	ignore    *workdir.Ignore
	tempsOurs bool
	listings  *workdir.WatchedListings // nil: remember nothing
}

// Scan is L as the operations see it.
type Scan struct {
	Files    map[string]cas.ID         // tree L: path → file ID
	Stats    *workdir.StatCache        // the stat cache to record
	Content  map[string][]byte         // files read by this scan
	Chunks   map[string][]cas.ChunkRef // chunk lists of Content's chunked files (workdir.Listing.Chunks)
	Invalid  []diag.FileError          // every file that breaks the content rules
	Temps    []string                  // leftover temporary files of a crashed rewrite
	Ignored  []string                  // entries of L the ignore rules leave out (directories end in '/')
	Virtual  map[string]bool           // paths of files that are A's, not read from L (plan.AddVirtual)
	Restore  map[string]bool           // virtual paths to write into L at the next rewrite
	Withheld []string                  // A's paths L does not hold because of a rule (as recorded in P)
	Unknown  []string                  // withheld paths no rule ignores now, where L holds a file: their base is unknown (server/plan)
	Changed  bool                      // stats differ from the loaded cache
	ByID     map[cas.ID]string         // file ID → one path holding it (built on demand)
	Touched  []string                  // paths that may differ from stats' IDs at the scan's start (workdir.Listing.Touched)
	Markers  []string                  // the files of stats holding complete conflict blocks (workdir.Listing.Markers)
}

// ScanWithRules is scan under the engine's rules, with the virtual entries
// of the accepted files L leaves out.
func (s *Call) ScanWithRules() (*Scan, error) {
	flag, err := s.State.LoadRecovery()
	if err != nil {
		return nil, err
	}
	res, err := scanWith(s.Root, s.Stats, scanRules{ignore: s.Env.Ignore, tempsOurs: flag != nil, listings: s.listings()})
	if err != nil {
		return nil, err
	}
	if s.Base != nil {
		s.addVirtual(res)
	}
	return res, nil
}

// addVirtual adds A's files at the paths L ignores, and those withheld
// earlier that L still lacks, to res (plan.AddVirtual), and records the
// withheld set when it changed.
func (s *Call) addVirtual(res *Scan) {
	a := plan.Accepted{Baseline: &s.Base.Baseline, Ignored: s.Base.Ignored, Known: s.Base.IgnoredKnown, Learn: s.Base.LearnIgnored}
	v := plan.AddVirtual(s.State.Dir, a, s.Env.Ignore, res.Files, func(err error) {
		s.Env.Log.Warn("cannot record the withheld paths", "err", err)
	})
	res.Virtual, res.Restore, res.Withheld, res.Unknown = v.Paths, v.Restore, v.Withheld, v.Unknown
}

// scanWith scans L (workdir.Scan) under rules; the cache becomes the
// result's stats (updated in place, not copied).
func scanWith(root *os.Root, cache *workdir.StatCache, rules scanRules) (*Scan, error) {
	l, err := workdir.Scan(root, cache, workdir.Rules{Ignore: rules.ignore, TempsOurs: rules.tempsOurs}, rules.listings)
	if err != nil {
		return nil, err
	}
	res := &Scan{Files: l.Files, Stats: l.Stats, Content: l.Content, Chunks: l.Chunks, Temps: l.Temps, Ignored: l.Ignored, Changed: l.Changed, Touched: l.Touched, Markers: l.Markers}
	if len(l.Invalid) > 0 {
		res.Invalid = make([]diag.FileError, len(l.Invalid))
		for i, r := range l.Invalid {
			res.Invalid[i] = diag.FileError{Path: r.Path, Reason: r.Reason}
		}
	}
	return res, nil
}

// PathOf returns a path of L holding file ID id ("" if none).
func (res *Scan) PathOf(id cas.ID) string {
	if res.ByID == nil {
		res.ByID = make(map[cas.ID]string, len(res.Files))
		for p, fid := range res.Files {
			if !res.Virtual[p] { // not in L: never re-read from there
				res.ByID[fid] = p
			}
		}
	}
	return res.ByID[id]
}

// ReadContent returns content with file ID id that this scan read. The
// scan of a commit usually read a handful of files: they are searched
// directly, without pathOf's map of every path of L (10,000 entries for
// a diffstat that wants one old version, which the object cache holds).
func (res *Scan) ReadContent(id cas.ID) ([]byte, bool) {
	if len(res.Content) > 64 {
		c, ok := res.Content[res.PathOf(id)]
		return c, ok
	}
	for p, c := range res.Content {
		if res.Files[p] == id {
			return c, true
		}
	}
	return nil, false
}

// MarkerFiles returns the files of L holding complete conflict blocks.
func (res *Scan) MarkerFiles() []string {
	out := slices.Clone(res.Markers)
	sort.Strings(out)
	return out
}
