package server

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/server/diag"
	"github.com/slivingdoc/slivingdoc/server/history"
)

// With --retain 1m standing in for 30 days, the window passes (the
// engine's clock is moved on, no sleep) and a sweep drops the history
// below the oldest checkpoint `current` lists: every history call at,
// before and past the oldest retained generation answers or says
// HISTORY_UNAVAILABLE naming what verify reports, never CACHE_CORRUPT.
// A version-4 `current` lists at most two checkpoints whatever
// --retained-checkpoints says, and a sweep cuts history only once
// `current` is a window (K + M) past that checkpoint and every generation
// up to it has left --retain: so a small window (K = M = 4), a checkpoint
// every 8 generations, and the clock moved past the first 34.
func TestHistoryPastTheRetentionWindow(t *testing.T) {
	for name, newStore := range v4Stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			store := newStore(t)
			var ahead atomic.Int64
			clock := func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }
			a := retainV4Agent(t, store, func(c *Config) { c.Retain, c.Now = time.Minute, clock })
			a.pull()
			for i := 1; i <= 41; i++ { // the last after a checkpoint: a publication above it
				if i == 35 {
					ahead.Store(int64(2 * time.Minute)) // the first 34 are now out of the window
				}
				a.write("n.md", fmt.Sprintf("%d\n", i))
				a.write(fmt.Sprintf("f%d.md", i), "x\n")
				a.commit(fmt.Sprint("c", i))
				a.e.publishing.Background.Wait()
			}
			// The sweep a later commit of the fleet would run (the rule
			// picks generation 48 next).
			a.e.publishing.Background.Sweep(ctx)
			rep, err := remote.Verify(ctx, store, remote.VerifyOptions{})
			if err != nil || !rep.OK() {
				t.Fatalf("verify: %v %+v", err, rep)
			}
			ret := rep.History
			if ret.Floor < 16 || ret.Floor > 34 || ret.Oldest != ret.Floor+1 {
				t.Fatalf("retention %+v: the window's end dropped nothing", ret)
			}

			fresh := retainV4Agent(t, store)
			log, err := fresh.e.History(ctx, history.Query{Limit: 10})
			if err != nil || len(log) == 0 || log[len(log)-1].Generation != ret.Oldest || log[0].Message != "c41" {
				t.Fatalf("log at its default length: %d entries, %v; verify's oldest publication %d", len(log), err, ret.Oldest)
			}
			for _, q := range []history.Query{{Limit: 10, Path: "n.md"}, {Limit: 10, Since: time.Unix(0, 0)}, {Limit: 10, Path: "f1.md"}} {
				if _, err := fresh.e.History(ctx, q); err != nil {
					t.Fatalf("log %+v: %v", q, err)
				}
			}

			treeMsg := fmt.Sprintf("the oldest retained generation is %d.", ret.Floor)
			pubMsg := fmt.Sprintf("the oldest retained generation is %d.", ret.Oldest)
			for _, g := range []uint64{1, ret.Floor - 1, ret.Floor, ret.Floor + 1, ret.Oldest} {
				_, errFile := fresh.e.FileAt(ctx, g, "n.md")
				_, errDiff := fresh.e.Diff(ctx, g, history.Latest, "")
				_, errShow := fresh.e.Show(ctx, g, "")
				for _, c := range []struct {
					err    error
					usable bool
					msg    string
				}{{errFile, g >= ret.Floor, treeMsg}, {errDiff, g >= ret.Floor, treeMsg}, {errShow, g > ret.Floor, pubMsg}} {
					if c.usable {
						if c.err != nil {
							t.Fatalf("generation %d (retention %+v): %v", g, ret, c.err)
						}
						continue
					}
					if de := domainErr(t, c.err, diag.CodeInvalidRequest, diag.ReasonHistoryUnavailable); !strings.Contains(de.Message, c.msg) {
						t.Fatalf("generation %d: %q does not say %q", g, de.Message, c.msg)
					}
				}
			}
			if got, err := fresh.e.FileAt(ctx, ret.Floor, "n.md"); err != nil || len(got) == 0 {
				t.Fatalf("n.md at the oldest retained generation %d: %q %v", ret.Floor, got, err)
			}
		})
	}
}

// A log longer than one window of publications reads chains fetched after
// the first objects were read (the object source learns of their caches).
func TestHistoryAcrossChainsAndWindows(t *testing.T) {
	ctx := context.Background()
	store := memstore.New()
	a := newAgent(t, store, withCheckpoints(60, 3), func(c *Config) { c.Retain = NoRetainWindow })
	a.pull()
	for i := 1; i <= 300; i++ {
		a.write("n.md", fmt.Sprintf("%d\n", i))
		a.commit(fmt.Sprint("c", i))
	}
	a.e.publishing.Background.Wait()
	fresh := newAgent(t, store)
	log, err := fresh.e.History(ctx, history.Query{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := remote.Verify(ctx, store, remote.VerifyOptions{})
	if err != nil || len(log) == 0 || log[len(log)-1].Generation != rep.History.Oldest || len(log) <= 128 {
		t.Fatalf("log of %d entries ending at %d; verify %+v, %v", len(log), log[len(log)-1].Generation, rep.History, err)
	}
}
