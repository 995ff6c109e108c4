package main

import (
	"math"
	"strings"
	"testing"
)

// The proxy's classes are priced by their method at S3 Standard's: two
// accepted commits whose traffic was 3 GETs, 1 HEAD, 2 conditional PUTs
// of `current` (one a 412), 2 pack PUTs, 1 conditional create, 1 LIST and
// 5 DELETEs cost (6 × $0.005 + 4 × $0.0004) / 1,000 for the two: $15.80
// per million commits, shown beside 7.5 requests per commit.
func TestS3CostOfProxyTraffic(t *testing.T) {
	reqs := []OpCount{
		{Class: "GET current", Requests: 2},
		{Class: "GET packs/increments", Requests: 1},
		{Class: "HEAD current", Requests: 1},
		{Class: "PUT if-match current", Requests: 2, Statuses: map[int]int{200: 1, 412: 1}},
		{Class: "PUT packs/increments", Requests: 2},
		{Class: "PUT if-none-match proposals", Requests: 1},
		{Class: "LIST", Requests: 1},
		{Class: "DELETE proposals", Requests: 5},
	}
	if got := s3PerMillion(reqs, 2); math.Abs(got-15.80) > 1e-9 {
		t.Fatalf("$%.4f per million commits, want $15.80", got)
	}
	if cells := trafficCells(reqs, 2); !strings.HasPrefix(cells, "7.5 | $15.80 | 2, 1 × 412") {
		t.Fatalf("traffic cells %q: want 7.5 requests, then $15.80, then the conditional writes", cells)
	}
	if cells := trafficCells(reqs, 0); !strings.HasPrefix(cells, "– | – |") {
		t.Fatalf("traffic cells of a run that accepted nothing: %q", cells)
	}
}
