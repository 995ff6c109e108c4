package remote

import (
	"testing"
	"time"

	"github.com/slivingdoc/slivingdoc/cas"
)

func retainCP(through uint64) Checkpoint {
	pub := v4id(50000 + int(through))
	return Checkpoint{Pack: PackRef{Key: CheckpointKey(through, pub), Sum: cas.Sum([]byte{byte(through)}), Size: 10},
		Head: v4head(int(through)), Through: through, Publication: pub}
}

// The floor is the oldest listed checkpoint, once it lies a window below
// the generation and at or above the upgrade; otherwise nothing accepted
// goes (docs/storage.md §5.1 R1).
func TestHistoryFloorV4Rule(t *testing.T) {
	m, _ := buildV4(t, 100, 1)
	for _, tc := range []struct {
		name      string
		active    uint64
		retained  []uint64
		upgraded  uint64
		window, w uint64
	}{
		{"no checkpoint", 0, nil, 1, 8, 0},
		{"the active one only", 60, nil, 1, 8, 60},
		{"the oldest retained one", 60, []uint64{40}, 1, 8, 40},
		{"inside the protocol's window", 60, []uint64{40}, 1, 61, 0},
		{"exactly the window below", 60, []uint64{40}, 1, 60, 40},
		{"below the upgrade", 60, []uint64{20}, 30, 8, 29},
	} {
		c := *m
		c.Upgraded, c.Checkpoint, c.Checkpoints = tc.upgraded, Checkpoint{}, nil
		if tc.active != 0 {
			c.Checkpoint = retainCP(tc.active)
		}
		for _, r := range tc.retained {
			c.Checkpoints = append(c.Checkpoints, retainCP(r))
		}
		if got := HistoryFloorV4(&c, tc.window); got != tc.w {
			t.Errorf("%s: floor %d, want %d", tc.name, got, tc.w)
		}
	}
}

// A generation at or below the floor younger than --retain keeps the
// whole history; none, or no window, lets it go (R1).
func TestOutsideWindow(t *testing.T) {
	now := time.UnixMilli(10_000_000)
	incs := []IncrementV4{{Generation: 1, Time: 1_000_000}, {Generation: 2, Time: 9_500_000}, {Generation: 3, Time: 9_999_000}}
	for _, tc := range []struct {
		floor  uint64
		retain time.Duration
		want   bool
	}{
		{1, time.Second, true},
		{2, time.Second, true},
		{3, time.Second, false}, // generation 3 is 1 s old: inside
		{2, time.Hour, false},
		{3, 0, true},
	} {
		if got := outsideWindow(incs, tc.floor, tc.retain, now); got != tc.want {
			t.Errorf("floor %d, retain %v: %v, want %v", tc.floor, tc.retain, got, tc.want)
		}
	}
}
