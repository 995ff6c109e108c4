package fleetsim

import (
	"regexp"

	"github.com/slivingdoc/slivingdoc/bench/linecheck"
)

// Every line an agent commits starts with its tag and sequence number
// ("a0042-c003 ..."), so the final notebook can be audited line by line
// (bench/linecheck; four-digit agent numbers, for fleets of 1,000).
var taggedLine = regexp.MustCompile(`^a[0-9]{4}-c[0-9]{3} `)

// Audit is the line audit of a final notebook.
type Audit = linecheck.Audit

// checkLines audits tree (path -> content) for the agents' tags.
func checkLines(tree map[string][]byte, accepted, written []string) Audit {
	return linecheck.Check(tree, taggedLine, accepted, written)
}

// readTree reads every regular file under dir, keyed by slash path.
var readTree = linecheck.ReadTree
