package main

import (
	"regexp"

	"github.com/slivingdoc/slivingdoc/bench/linecheck"
)

// The writers of contention and agents tag every line they add with their
// name and a sequence number ("w007-c003 ..."), so the final notebook can be
// audited line by line (bench/linecheck).
var taggedLine = regexp.MustCompile(`^[wa][0-9]{3}-c[0-9]{3} `)

// LineCheck is the audit of a final notebook.
type LineCheck = linecheck.Audit

// checkLines audits tree (path -> content) for the writers' tags.
func checkLines(tree map[string][]byte, accepted, written []string) LineCheck {
	return linecheck.Check(tree, taggedLine, accepted, written)
}

// readTree reads every regular file under dir, keyed by slash path.
var readTree = linecheck.ReadTree
