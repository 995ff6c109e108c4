package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/slivingdoc/slivingdoc/remote"
)

func init() {
	register(command{name: "verify", summary: "check that the store is whole", run: runVerify, oneShot: true, ownSignals: true})
}

// runVerify checks the configured store (remote.Verify) and prints a
// report. Exit status: 0 the store is whole (orphans allowed), 1 problems
// found or the store could not be read, 2 a usage or setup error.
func runVerify(ctx context.Context, args []string, s stdio) int {
	c := newCLICommand("verify", "verify [flags]",
		"Checks the whole store: the manifest `current` against every rule, every pack it\n"+
			"references (present, size and BLAKE3 as recorded, every object against its ID), and\n"+
			"that the head of the active and of every retained chain reads completely; in store\n"+
			"format 2 also every history segment, the rollups, and that no object is newer than\n"+
			"`current` (a store restored from an older copy). Packs no chain references are\n"+
			"listed as orphans, which is not an error. Reads only; writes\n"+
			"nothing. Progress goes to stderr on large stores. See docs/operations.md.", s)
	asJSON := c.fs.Bool("json", false, "print the report as one JSON object")
	if _, code, done := c.parse(args, 0); done {
		return code
	}
	cfg, code, done := c.config(ctx)
	if done {
		return code
	}
	p := &verifyProgress{w: s.err, every: time.Second}
	rep, err := remote.Verify(ctx, cfg.Store, remote.VerifyOptions{Progress: p.tick})
	p.finish()
	if err != nil {
		if *asJSON {
			writeJSON(s.out, verifyJSON{OK: false, Store: cfg.Store.Identity(), Error: scrubText(err.Error()), Findings: []verifyFinding{}, Orphans: []verifyOrphan{}})
		}
		fmt.Fprintf(s.err, "slivingdoc verify: cannot read the store: %s\n", scrubText(err.Error()))
		return 1
	}
	if *asJSON {
		writeJSON(s.out, toJSON(cfg.Store.Identity(), rep))
	} else {
		printVerify(s.out, cfg.Store.Identity(), rep)
	}
	if !rep.OK() {
		return 1
	}
	return 0
}

// verifyJSON is the --json report: stable field names for scripts.
type verifyJSON struct {
	OK         bool            `json:"ok"`
	Store      string          `json:"store"`
	Error      string          `json:"error,omitempty"` // the store could not be read
	Generation uint64          `json:"generation"`
	Chains     int             `json:"chains"`
	Packs      int             `json:"packs"`
	Bytes      int64           `json:"bytes"`
	Objects    int             `json:"objects"`
	Findings   []verifyFinding `json:"findings"`
	Orphans    []verifyOrphan  `json:"orphans"`
	// History: the oldest generation whose files the history commands
	// read, and the oldest publication whose changes they show (0: none).
	OldestGeneration  uint64 `json:"oldestGeneration"`
	OldestPublication uint64 `json:"oldestPublication"`
}

type verifyFinding struct {
	Code   string `json:"code"`
	Key    string `json:"key,omitempty"`
	Chain  string `json:"chain,omitempty"`
	Detail string `json:"detail"`
}

type verifyOrphan struct {
	Key  string `json:"key"`
	Size int64  `json:"size"`
}

func toJSON(store string, rep *remote.Report) verifyJSON {
	out := verifyJSON{OK: rep.OK(), Store: store, Generation: rep.Generation, Chains: rep.Chains,
		Packs: rep.Packs, Bytes: rep.Bytes, Objects: rep.Objects,
		OldestGeneration: rep.History.Floor, OldestPublication: rep.History.Oldest,
		Findings: []verifyFinding{}, Orphans: []verifyOrphan{}}
	for _, f := range rep.Findings {
		out.Findings = append(out.Findings, verifyFinding{Code: f.Code, Key: f.Key, Chain: f.Chain, Detail: noIDs(f.Detail)})
	}
	for _, o := range rep.Orphans {
		out.Orphans = append(out.Orphans, verifyOrphan{Key: o.Key, Size: o.Size})
	}
	return out
}

func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// noIDs scrubs a finding's detail with the process's one policy
// (scrubText): IDs never leave the process.
func noIDs(s string) string { return scrubText(s) }

// printVerify prints
//
//	store file:///srv/notes
//	generation 57: 2 chains, 14 packs (1.2 MiB), 3,456 objects checked
//	PACK_MISSING  packs/increments/...  (active chain)
//	    the store does not have it
//	orphans: 1 (not an error; cleanup removes those at or below a checkpoint)
//	  packs/increments/...  1234 bytes
//	FAILED: 1 problem (see docs/operations.md, "Reading verify")
func printVerify(w io.Writer, store string, rep *remote.Report) {
	p := colourFor(w)
	fmt.Fprintf(w, "store %s\n", safeText(store))
	fmt.Fprintf(w, "generation %d: %d %s, %d %s (%s), %d %s checked\n", rep.Generation,
		rep.Chains, plural(rep.Chains, "chain", "chains"), rep.Packs, plural(rep.Packs, "pack", "packs"),
		byteSize(rep.Bytes), rep.Objects, plural(rep.Objects, "object", "objects"))
	if rep.Generation > 0 {
		fmt.Fprintln(w, historyLine(rep.History))
	}
	for _, f := range rep.Findings {
		where := ""
		if f.Chain != "" {
			where = "  (" + f.Chain + " chain)"
		}
		fmt.Fprintf(w, "%s  %s%s\n    %s\n", p.paint(ansiRed, f.Code), safeText(f.Key), where, safeText(noIDs(f.Detail)))
	}
	if len(rep.Orphans) > 0 {
		fmt.Fprintf(w, "orphans: %d (not an error; cleanup removes those at or below a checkpoint)\n", len(rep.Orphans))
		for _, o := range rep.Orphans {
			fmt.Fprintf(w, "  %s  %d bytes\n", safeText(o.Key), o.Size)
		}
	}
	if rep.OK() {
		fmt.Fprintf(w, "%s: the store is whole\n", p.paint(ansiGreen, "OK"))
		return
	}
	fmt.Fprintf(w, "%s: %d %s (see docs/operations.md, \"Reading verify\")\n", p.paint(ansiRed, "FAILED"), len(rep.Findings), plural(len(rep.Findings), "problem", "problems"))
}

// historyLine says how far back the history commands read, in the words
// of their HISTORY_UNAVAILABLE message.
func historyLine(r remote.Retention) string {
	if r.Oldest == 0 {
		return fmt.Sprintf("history: oldest retained generation %d (files only: no publication whose changes can be shown)", r.Floor)
	}
	return fmt.Sprintf("history: oldest retained generation %d, oldest retained publication %d", r.Floor, r.Oldest)
}

// byteSize is n in B, KiB, MiB or GiB with one decimal.
func byteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, suffix := float64(n)/unit, "KiB"
	for _, s := range []string{"MiB", "GiB", "TiB"} {
		if v < unit {
			break
		}
		v, suffix = v/unit, s
	}
	return fmt.Sprintf("%.1f %s", v, suffix)
}

// verifyProgress prints "verify: 120/340 packs checked" on stderr at most
// once per interval, only for stores large enough to keep the user
// waiting, and a final line if it printed any.
type verifyProgress struct {
	w       io.Writer
	every   time.Duration
	mu      sync.Mutex
	start   time.Time
	last    time.Time
	printed bool
	done    int
	total   int
}

// progressMinPacks: below this many packs verify is quick and silent.
const progressMinPacks = 50

func (p *verifyProgress) tick(done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if p.start.IsZero() {
		p.start, p.last = now, now
	}
	p.done, p.total = done, total
	if total < progressMinPacks || now.Sub(p.last) < p.every {
		return
	}
	p.last, p.printed = now, true
	fmt.Fprintf(p.w, "verify: %d/%d packs checked\n", done, total)
}

func (p *verifyProgress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.printed {
		fmt.Fprintf(p.w, "verify: %d/%d packs checked\n", p.done, p.total)
	}
}
