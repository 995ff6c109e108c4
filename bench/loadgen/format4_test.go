package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/slivingdoc/slivingdoc/remote"
)

// On a store seeded at format 4, writers racing through the real binary
// publish by version 4 (the store stays version 4: a version-3 write would
// replace it), every accepted commit advances the generation by one (its
// own generation), every accepted line is there once, and each accepted
// commit's own proposal is counted as its upload.
func TestContentionFormat4(t *testing.T) {
	for _, mode := range []string{modeDisjoint, modeShared} {
		t.Run(mode, func(t *testing.T) {
			r := testRunner(t)
			st := r.stores["file"]
			res, err := r.contentionBy(context.Background(), st, mode, 3, driverCLI, 4)
			if err != nil {
				t.Fatal(err)
			}
			if res.Format != 4 || res.Accepted != 9 || !res.Check.OK() || int(res.Generations) != res.Accepted {
				t.Fatalf("format %d: accepted %d/9, generations %d, audit %+v", res.Format, res.Accepted, res.Generations, res.Check)
			}
			if res.Attempts < res.Accepted || res.Attempts > 2*res.Accepted {
				t.Fatalf("%d proposals counted for %d accepted commits", res.Attempts, res.Accepted)
			}
			store, err := st.open(context.Background(), res.loc)
			if err != nil {
				t.Fatal(err)
			}
			cur, _, err := store.Get(context.Background(), remote.CurrentKey)
			if err != nil {
				t.Fatal(err)
			}
			if v := remote.ManifestVersionOf(cur); v != 4 {
				t.Fatalf("the store's current is of version %d after the run, not 4", v)
			}
		})
	}
}

// storeStats counts a commit's own packs: format 3's increment packs and
// registrations, format 4's proposals; never format 4's fold markers,
// registered descriptors or group packs, nor format 3's lead markers.
func TestStoreStatsCountsOwnPacks(t *testing.T) {
	objs := []object{
		{"current", 100},
		{"packs/increments/00000000000000000002-abc.pack", 10},
		{"proposals/00000000000000000002-lead", 1},
		{"proposals/00000000000000000002-0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b-group", 1},
		{"proposals/00000000000000000003-0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", 10},
		{"proposals/00000000000000000003-0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.fold.00000000000000000003-0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c", 0},
		{"proposals/00000000000000000003-r-af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262", 1},
		{"proposals/00000000000000000003-c-af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262", 1},
		{"packs/groups/af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262.pack", 10},
	}
	bytes, packs := storeStats(objs)
	if bytes != 134 || packs != 2 {
		t.Fatalf("storeStats = %d bytes, %d packs; want 134, 2", bytes, packs)
	}
}

// The proxy's proposal PUTs are the commits' own proposals: a rollup's or
// a checkpoint's registered descriptor and a fold marker are classes of
// their own, so the uploads-per-commit figure does not count them.
func TestProxyCountsCommitProposalsApart(t *testing.T) {
	const id = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
	const sum = "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"
	cases := []struct{ key, class string }{
		{"proposals/00000000000000000003-" + id, "PUT proposals"},
		{"proposals/00000000000000000003-r-" + sum, "PUT proposals registered"},
		{"proposals/00000000000000000003-c-" + sum, "PUT proposals registered"},
		{"proposals/00000000000000000003-" + id + ".fold.00000000000000000003-" + id, "PUT proposals fold markers"},
	}
	var reqs []OpCount
	for _, c := range cases {
		r := httptest.NewRequest(http.MethodPut, "/bucket/prefix/"+c.key, nil)
		if got := classify(r); got != c.class {
			t.Errorf("%s: class %q, want %q", c.key, got, c.class)
		}
		reqs = append(reqs, OpCount{Class: classify(r), Requests: 1})
	}
	if n := proposalPuts(reqs); n != 1 {
		t.Fatalf("proposalPuts = %d, want 1 (the commit's own)", n)
	}
}
