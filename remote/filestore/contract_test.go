package filestore_test

import (
	"testing"

	"github.com/slivingdoc/slivingdoc/remote"
	"github.com/slivingdoc/slivingdoc/remote/filestore"
	"github.com/slivingdoc/slivingdoc/remote/remotetest"
)

func TestFileContract(t *testing.T) {
	remotetest.Run(t, func(t *testing.T) remote.Store {
		s, err := filestore.New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
