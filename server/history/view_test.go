package history

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/remote"
)

// noEngine fails the test on any request: the refusals below are decided
// from the state and its retention alone.
type noEngine struct{ t *testing.T }

func (n noEngine) ChainsBetween(context.Context, remote.State, uint64, uint64, uint64) ([]remote.Chain, error) {
	n.t.Error("the history was listed")
	return nil, errors.New("listed")
}
func (n noEngine) KeyOf(remote.Chain) string          { return "" }
func (n noEngine) KeyAt(remote.Checkpoint) string     { return "" }
func (n noEngine) Fetch(context.Context, Group) error { n.t.Error("packs were fetched"); return nil }

// TestOutsideTheRetainedHistory: a generation below the retained window is
// refused as unavailable, naming the oldest that can be read (the floor for
// a tree, the oldest publication for a publication's changes), never
// answered as an empty history; one above the notebook is an invalid
// argument; a state that keeps no publication lists none.
func TestOutsideTheRetainedHistory(t *testing.T) {
	state := remote.State{Manifest: &remote.Manifest{Version: 2, Generation: 10}}
	v := NewView(context.Background(), Observed{State: state, Retention: remote.Retention{Floor: 5, Oldest: 6}, Engine: noEngine{t}})
	for _, tc := range []struct {
		name string
		err  func() error
		want string
	}{
		{"the tree below the floor", func() error { _, _, err := v.HeadAt(4); return err }, "the oldest retained generation is 5."},
		{"the publication at the floor", func() error { _, _, err := v.PublicationAt(5); return err }, "the oldest retained generation is 6."},
		{"a publication below the floor", func() error { _, err := v.Show(2, ""); return err }, "the oldest retained generation is 6."},
		{"a file below the floor", func() error { _, err := v.FileAt(1, "a.md"); return err }, "the oldest retained generation is 5."},
		{"a diff from below the floor", func() error { _, err := v.Diff(4, Latest, ""); return err }, "the oldest retained generation is 5."},
	} {
		var un *UnavailableError
		if err := tc.err(); !errors.As(err, &un) || !strings.Contains(un.Msg, tc.want) {
			t.Errorf("%s: %v, want an UnavailableError saying %q", tc.name, err, tc.want)
		}
	}
	var arg *ArgumentError
	if _, _, err := v.HeadAt(11); !errors.As(err, &arg) {
		t.Errorf("a generation above the notebook: %v, want an ArgumentError", err)
	}

	none := NewView(context.Background(), Observed{State: state, Retention: remote.Retention{Floor: 9}, Engine: noEngine{t}})
	if got, err := none.Entries(Query{Limit: 10}, 0); err != nil || got == nil || len(got) != 0 {
		t.Errorf("no retained publication: %v, %v; want an empty list", got, err)
	}
	if _, _, err := none.PublicationAt(9); !errors.As(err, new(*UnavailableError)) || !strings.Contains(err.Error(), "keeps no publication whose changes can be shown") {
		t.Errorf("the publication at the floor when none is retained: %v", err)
	}
}
