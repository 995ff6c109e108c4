package dirstate

import (
	"fmt"
	"os"
	"strconv"

	"github.com/slivingdoc/slivingdoc/publish"
	"github.com/slivingdoc/slivingdoc/server/pstate"
)

// streakFile keeps this directory's publish.Streak (the LIST-skip rule:
// a writer alone publishes in three requests) between its commits, in P
// beside the baseline. Not durable and never trusted beyond a hint: a
// missing or damaged one is the zero Streak, which costs one LIST, and
// publish skips the LIST only while `current` shows the writer's own
// previous write as the newest. A sealed record of fixed width (pstate.Seal:
// the generation in 20 digits, the count of skips in one), overwritten in
// place on every commit rather than replaced by a new file; a save met
// half done, or cut by a crash, fails its check and reads as the zero
// Streak. The older form, the two numbers alone, is still read.
const streakFile = "streak"

// LoadStreak is the directory's streak (the zero Streak when it has none
// that reads whole).
func (d State) LoadStreak() publish.Streak {
	data, err := os.ReadFile(d.File(streakFile))
	if err != nil {
		return publish.Streak{}
	}
	f, ok := pstate.Unseal(data, 2)
	if !ok {
		return publish.Streak{}
	}
	g, err1 := strconv.ParseUint(f[0], 10, 64)
	n, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || n < 0 || n > publish.MaxSkips {
		return publish.Streak{}
	}
	return publish.Streak{Generation: g, Skipped: n}
}

// SaveStreak records st; the zero Streak is recorded as such (not by
// removing the file), so the next save overwrites it in place too.
func (d State) SaveStreak(st publish.Streak) {
	_ = pstate.Overwrite(d.File(streakFile), pstate.Seal(fmt.Sprintf("%020d", st.Generation), strconv.Itoa(st.Skipped)))
}
