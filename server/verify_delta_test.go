package server

import "github.com/slivingdoc/slivingdoc/server/dircall"

// Every test checks each delta a long-lived engine finds from the tree
// the last call left against the delta over every path (dircall.Call.BaseDelta).
func init() { dircall.VerifyRefDelta = true }
