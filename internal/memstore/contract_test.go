package memstore_test

import (
	"testing"

	"github.com/slivingdoc/slivingdoc/internal/memstore"
	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/remotetest"
)

func TestMemContract(t *testing.T) {
	remotetest.Run(t, func(t *testing.T) remote.Store { return memstore.New() })
}
