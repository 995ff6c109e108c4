//go:build unix

package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// The end of a campaign: with the faults over, every writer commits what
// it still holds (settle); then a fresh directory pulls the notebook and
// `slivingdoc verify` checks the store; then the journals are judged
// against the fresh tree and the writers' directories.

// tokenPrefix starts every line a writer adds.
const tokenPrefix = "chaos-"

// journal is one writer's record: tokens written to L, in order, and the
// tokens a commit reported OK. (It also lists each operation's outcome.)
type journal struct {
	written []string
	ok      map[string]bool
}

func readJournal(path string) (journal, error) {
	f, err := os.Open(path)
	if err != nil {
		return journal{}, err
	}
	defer f.Close()
	j := journal{ok: map[string]bool{}}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		kind, rest, _ := strings.Cut(sc.Text(), " ")
		tok, _, _ := strings.Cut(rest, " ")
		switch kind {
		case "WRITE":
			j.written = append(j.written, tok)
		case "OK":
			j.ok[tok] = true
		case "OP": // an operation's outcome, for people reading a failed run
		default:
			return j, fmt.Errorf("%s: unreadable line %q", path, sc.Text())
		}
	}
	return j, sc.Err()
}

// engineTemp starts the temporary siblings a rewrite of L creates (and
// the next operation removes after a crash): not the user's files.
const engineTemp = ".slivingdoc-tmp-"

// countTokens counts each token line in the files under dir.
func countTokens(dir string) (map[string]int, error) {
	n := map[string]int{}
	err := eachFile(dir, func(p string, data []byte) error {
		if strings.HasPrefix(filepath.Base(p), engineTemp) {
			return nil
		}
		for _, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(l, tokenPrefix) {
				n[l]++
			}
		}
		return nil
	})
	return n, err
}

// eachFile calls f with the path and content of every file under dir.
func eachFile(dir string, f func(path string, data []byte) error) error {
	return filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return f(p, data)
	})
}

// verdict is what became of every token.
type verdict struct {
	Written    int // tokens written to a writer's directory
	Accepted   int // journaled OK: must be in the fresh pull exactly once
	Published  int // never reported OK, yet in the fresh pull once
	OnDisk     int // never reported OK, not published, still in the writer's directory
	Lost       int
	Duplicated int
	Phantom    int // in the fresh pull, never written by anyone
	Problems   []string
}

// judge applies the end rules: a token reported OK is in the fresh tree
// exactly once; a token never reported OK is either published (once) or
// still on disk in its writer's directory; nothing appears twice, and
// nothing appears that no writer wrote.
func judge(journals map[int]journal, fresh map[string]int, onDisk map[int]map[string]int) verdict {
	var v verdict
	known := map[string]bool{}
	ids := make([]int, 0, len(journals))
	for id := range journals {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	for _, id := range ids {
		j := journals[id]
		for _, tok := range j.written {
			known[tok] = true
			v.Written++
			n := fresh[tok]
			switch {
			case n > 1:
				v.Duplicated++
				v.Problems = append(v.Problems, fmt.Sprintf("%s appears %d times in a fresh pull", tok, n))
			case j.ok[tok] && n == 1:
				v.Accepted++
			case j.ok[tok]:
				v.Lost++
				v.Problems = append(v.Problems, fmt.Sprintf("%s was reported OK but is not in a fresh pull", tok))
			case n == 1:
				v.Published++
			case onDisk[id][tok] > 0:
				v.OnDisk++
			default:
				v.Lost++
				v.Problems = append(v.Problems, fmt.Sprintf("%s (never reported OK) is neither published nor on disk in writer %d's directory", tok, id))
			}
		}
	}
	for tok := range fresh {
		if !known[tok] {
			v.Phantom++
			v.Problems = append(v.Problems, fmt.Sprintf("%s is in a fresh pull but no writer wrote it", tok))
		}
	}
	sort.Strings(v.Problems)
	return v
}

// check ends the campaign. The journals are judged twice: right after
// the fault phase (the rule for edits never reported OK bites here: each
// is published or still in its directory), and after every writer settled
// (then, normally, everything is published), when verify also runs.
func (c *campaign) check() error {
	c.checkOutageRule()
	before, err := c.judgeNow("after-faults", false)
	if err != nil {
		return err
	}
	for _, w := range c.writers {
		if !c.untilOK(w, "commit", "-m", "chaos: settle") {
			c.st.note("writer %d could not settle; its unpublished edits must be on disk", w.id)
		}
	}
	after, err := c.judgeNow("after-settle", true)
	if err != nil {
		return err
	}
	var largest int64
	for _, w := range c.writers {
		largest = max(largest, dirSize(w.priv))
	}
	c.st.mu.Lock()
	c.st.before, c.st.verdict = before, after
	c.st.privateMax = largest
	c.st.mu.Unlock()
	return nil
}

// dirSize is the bytes of the files under dir.
func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// judgeNow pulls the notebook into a fresh directory of its own, runs
// verify there if asked, and judges every writer's journal against it and
// the writers' directories; problems become failures.
func (c *campaign) judgeNow(name string, verify bool) (verdict, error) {
	fresh := &writer{id: -2, dir: filepath.Join(c.work, name), priv: filepath.Join(c.work, name+"-priv"), started: make(chan struct{}, 1)}
	for _, d := range []string{fresh.dir, fresh.priv} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return verdict{}, err
		}
	}
	if !c.untilOK(fresh, "pull") {
		return verdict{}, fmt.Errorf("%s: a fresh pull never succeeded", name)
	}
	if verify {
		c.verify(fresh)
	}
	freshTokens, err := countTokens(fresh.dir)
	if err != nil {
		return verdict{}, err
	}
	n, where := auditMarkers(fresh.dir)
	c.st.observed(n, where)
	journals := map[int]journal{}
	onDisk := map[int]map[string]int{}
	for _, w := range c.writers {
		if journals[w.id], err = readJournal(w.journal.Name()); err != nil {
			return verdict{}, err
		}
		if onDisk[w.id], err = countTokens(w.dir); err != nil {
			return verdict{}, err
		}
	}
	v := judge(journals, freshTokens, onDisk)
	for i, p := range v.Problems {
		if i == 20 {
			c.st.fail("%s: ... and %d more token problems", name, len(v.Problems)-i)
			break
		}
		c.st.fail("%s: %s", name, p)
	}
	return v, nil
}

// verify runs `slivingdoc verify` on the store; it must pass.
func (c *campaign) verify(w *writer) {
	res := runProc(c.cfg.bin, w.dir, c.procEnv(w.priv), 10*time.Minute, func(*proc) {}, "verify")
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	if res.Outcome == outOK {
		c.st.verified = true
		return
	}
	out := res.Output
	if res.Outcome == outDomain {
		out = fmt.Sprintf("%s · %s", res.Report.Code, res.Report.Reason)
	}
	c.st.failures = append(c.st.failures, fmt.Sprintf("slivingdoc verify did not pass (%s):\n%s", res.Outcome, out))
}

// checkOutageRule: an operation that ran entirely while the store was
// down or frozen ends in STORAGE_FAILURE, retryable, with RETRY as its action (or
// was killed by a fault).
func (c *campaign) checkOutageRule() {
	c.mu.Lock()
	outages := c.outages
	c.mu.Unlock()
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	for _, r := range c.st.all {
		for _, o := range outages {
			if r.Start.Before(o.from) || r.End.After(o.to) || r.Outcome == outKilled {
				continue
			}
			c.st.duringOutage++
			if r.Outcome != outDomain || r.Report.Code != "STORAGE_FAILURE" || !r.Report.Retryable || r.Report.Action != "RETRY" {
				c.st.failures = append(c.st.failures, fmt.Sprintf("writer %d %s while the store was down or frozen ended %s %s·%s (action %s, retryable %t); want STORAGE_FAILURE, retryable, RETRY",
					r.Writer, r.Op, r.Outcome, r.Report.Code, r.Report.Reason, r.Report.Action, r.Report.Retryable))
			}
		}
	}
}
