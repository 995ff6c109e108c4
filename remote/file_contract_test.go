package remote_test

import (
	"testing"

	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/remotetest"
)

func TestFileContract(t *testing.T) {
	remotetest.Run(t, func(t *testing.T) remote.Store {
		s, err := remote.NewFile(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
