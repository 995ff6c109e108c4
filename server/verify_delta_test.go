package server

// Every test checks each delta a long-lived engine finds from the tree
// the last call left against the delta over every path (session.go).
func init() { verifyRefDelta = true }
