package fuzz

import (
	"bytes"
	"testing"

	"github.com/slivingdoc/slivingdoc/remote"
)

// FuzzStoreID: the store-id object comes from a bucket we do not control.
// Whatever decodes is an ID and re-encodes to the same bytes; nothing
// panics.
func FuzzStoreID(f *testing.F) {
	f.Add(remote.EncodeStoreID("0123456789abcdef0123456789abcdef"))
	f.Add(remote.EncodeStoreID(remote.NewStoreID()))
	f.Add([]byte("slivingdoc store-id 1\n"))
	f.Add([]byte("slivingdoc store-id 2\n0123456789abcdef0123456789abcdef\n"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		id, err := remote.DecodeStoreID(data)
		if err != nil {
			return
		}
		if !remote.IsStoreID(id) {
			t.Fatalf("decoded %q, not an ID", id)
		}
		if again := remote.EncodeStoreID(id); !bytes.Equal(again, data) {
			t.Fatalf("%q re-encodes as %q", data, again)
		}
	})
}
