package remote_test

// Helpers of the tests that build version-3 stores with the test-only
// version-3 writer (v3writer_test.go).

import (
	"context"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/remotetest"
)

// proposer is a build callback: each call proposes a new head whose pack is
// derived from the publication ID, and records what it observed.
type proposer struct {
	observed []remote.State
	pubs     []string
}

func (p *proposer) build(ctx context.Context, observed remote.State, pub string) (remote.Proposal, error) {
	p.observed = append(p.observed, observed)
	p.pubs = append(p.pubs, pub)
	return proposal(observed.Head(), pub), nil
}

// proposal returns a valid proposal: a real pack with a commit on parent
// made by pub.
func proposal(parent cas.ID, pub string) remote.Proposal {
	b := remotetest.Proposal(parent, pub, []byte("test"))
	return remote.Proposal{Pack: b.Pack, Head: b.Head}
}
