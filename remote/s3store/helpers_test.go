package s3store_test

import (
	"context"

	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/remotetest"
)

// proposer is a build callback: each call proposes a new head whose pack is
// derived from the publication ID, and records what it observed (as in
// remote's own tests).
type proposer struct {
	observed []remote.State
	pubs     []string
}

func (p *proposer) build(ctx context.Context, observed remote.State, pub string) (remote.Proposal, error) {
	p.observed = append(p.observed, observed)
	p.pubs = append(p.pubs, pub)
	return remotetest.Proposal(observed.Head(), pub, []byte("test")), nil
}
