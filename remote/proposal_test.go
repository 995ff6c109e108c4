package remote_test

import (
	"bytes"
	"testing"

	"github.com/slivingdoc/slivingdoc/cas"
	"github.com/slivingdoc/slivingdoc/remote"
)

func TestProposalDescriptorRoundTrip(t *testing.T) {
	d := remote.ProposalDescriptor{
		Publication: remote.NewUUIDv7(), ParentGeneration: 41,
		Parent: cas.Sum([]byte("parent")), Head: cas.Sum([]byte("head")),
	}
	d.Pack = remote.PackRef{Key: remote.IncrementKey(42, d.Publication), Sum: cas.Sum([]byte("pack")), Size: 1234}
	key := remote.ProposalKey(41, d.Publication)
	if want := "proposals/00000000000000000041-" + d.Publication; key != want {
		t.Fatalf("key %q, want %q", key, want)
	}
	data := remote.EncodeProposal(d)
	got, err := remote.DecodeProposal(key, data)
	if err != nil || got != d {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	for name, bad := range map[string][]byte{
		"reordered":     bytes.Replace(data, []byte(`{"version":1,`), []byte(`{ "version":1,`), 1),
		"unknown field": bytes.Replace(data, []byte(`{"version":1,`), []byte(`{"version":1,"x":1,`), 1),
		"other version": bytes.Replace(data, []byte(`{"version":1,`), []byte(`{"version":2,`), 1),
		"no newline":    bytes.TrimSuffix(data, []byte("\n")),
	} {
		if _, err := remote.DecodeProposal(key, bad); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
	if _, err := remote.DecodeProposal(remote.ProposalKey(40, d.Publication), data); err == nil {
		t.Error("a descriptor under another generation's key decoded")
	}
}
