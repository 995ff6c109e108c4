package fleetsim

import (
	"math"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/bench"
)

// The simulation prices its requests at S3 Standard's: conditional creates
// and replaces as PUTs, LIST as a PUT, HEAD as a GET, DELETE free. Two
// accepted commits that made 3 GETs (2 of `current`), 1 HEAD, 1 PUT, 2
// CREATEs, 2 REPLACEs (one lost), 1 LIST and 4 DELETEs cost (6 × $0.005 +
// 4 × $0.0004) / 1,000 for the two: $15.80 per million commits, which the
// requests table shows beside 7.00 requests per commit.
func TestS3CostPerMillionCommits(t *testing.T) {
	c := Counts{CurrentGets: 2}
	c.Requests[KindGet], c.Requests[KindHead], c.Requests[KindPut] = 3, 1, 1
	c.Requests[KindCreate], c.Requests[KindReplace], c.Requests[KindList], c.Requests[KindDelete] = 2, 2, 1, 4
	c.Won[KindReplace], c.Lost[KindReplace], c.WonCurrent = 1, 1, 1
	r := &Result{Agents: 2, Windows: 1, Accepted: 2, Offered: 2, Counts: c}
	r.S3DollarsPerMillion = bench.S3DollarsPerMillion(c.S3Dollars(), r.Accepted)
	if math.Abs(r.S3DollarsPerMillion-15.80) > 1e-9 {
		t.Fatalf("$%.4f per million commits, want $15.80", r.S3DollarsPerMillion)
	}
	md := Markdown([]*Result{r})
	if !strings.Contains(md, "| 7.00 | $15.80 |") {
		t.Fatalf("the requests table does not show $15.80 beside 7.00 requests per commit:\n%s", md)
	}
}
