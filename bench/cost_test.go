package bench

import (
	"math"
	"testing"
)

// The prices of S3 Standard on a known request mix: one uncontended commit
// (GET current, PUT the pack, conditional PUT current) costs $10.40 per
// million commits; LIST is billed as a PUT, HEAD as a GET, DELETE is free.
func TestS3CostOfAKnownMix(t *testing.T) {
	commit := S3RequestDollars("GET") + S3RequestDollars("PUT") + S3RequestDollars("PUT")
	if got := S3DollarsPerMillion(commit, 1); math.Abs(got-10.40) > 1e-9 {
		t.Fatalf("an uncontended commit costs $%.4f per million, want $10.40", got)
	}
	// Two commits that made 3 GETs, 1 HEAD, 4 PUTs, 2 LISTs and 7 DELETEs:
	// (6 × $0.005 + 4 × $0.0004) / 1,000 per 2 commits = $15.80 per million.
	var run float64
	for method, n := range map[string]int{"GET": 3, "HEAD": 1, "PUT": 4, "list": 2, "DELETE": 7} {
		run += float64(n) * S3RequestDollars(method)
	}
	if got := S3DollarsPerMillion(run, 2); math.Abs(got-15.80) > 1e-9 {
		t.Fatalf("the mix costs $%.4f per million commits, want $15.80", got)
	}
	if S3DollarsPerMillion(run, 0) != 0 {
		t.Fatal("a run that accepted nothing has no cost per commit")
	}
}
