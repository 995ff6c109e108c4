// Package bench holds the Go benchmarks of slivingdoc (in its _test files:
// cas, merge, remote, CLI and checkpoint workloads) and the deterministic
// note generators that they and the load generator (bench/loadgen) share, so
// both measure the same inputs; ProgramTB, with which the load
// generator and the fault campaign (bench/chaos) drive internal/seaweed;
// and the S3 Standard request prices (cost.go) at which the load generator
// and the fleet simulation (bench/fleetsim) price a commit.
package bench

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
)

// MergeEdits is the number of changed lines on each side of MergeNote.
const MergeEdits = 100

// MergeNote returns a note of about size bytes (markdown paragraphs, lists
// and blank lines) and two edited versions, each with MergeEdits changed
// lines at scattered positions that never touch the other side's, so the
// merge is clean and exercises the whole diff.
func MergeNote(size int) (base, local, remote []byte) { return MergeNoteEdits(size, MergeEdits) }

// MergeNoteEdits is MergeNote with edits changed lines on each side; the
// note must have at least 8*edits lines (about 450 bytes per edit), as the
// edited lines of the two sides are kept apart.
func MergeNoteEdits(size, edits int) (base, local, remote []byte) {
	r := rand.New(rand.NewPCG(uint64(size), 3))
	words := strings.Fields("the notebook agent merge line commit pull remote local file todo done fix check test build plan idea status next server store pack tree cache retry value")
	var lines []string
	for n := 0; n < size; {
		var l string
		switch r.IntN(6) {
		case 0:
			l = ""
		case 1:
			l = fmt.Sprintf("- [ ] item %d %s", len(lines), words[r.IntN(len(words))])
		default:
			var b strings.Builder
			fmt.Fprintf(&b, "%d", len(lines)) // lines are mostly distinct, as in real notes
			for range 6 + r.IntN(8) {
				b.WriteString(" " + words[r.IntN(len(words))])
			}
			l = b.String()
		}
		lines = append(lines, l)
		n += len(l) + 1
	}
	// Positions 0, 4, 8, ... go to local and 2, 6, 10, ... to remote, so
	// the two sides' edits are at least one unchanged line apart.
	slots := r.Perm(len(lines) / 4)[:2*edits]
	edit := func(slots []int, off int, tag string) []byte {
		out := append([]string(nil), lines...)
		for _, s := range slots {
			out[4*s+off] += " edited by " + tag
		}
		return []byte(strings.Join(out, "\n") + "\n")
	}
	return []byte(strings.Join(lines, "\n") + "\n"), edit(slots[:edits], 0, "local"), edit(slots[edits:], 2, "remote")
}

// NoteText is size bytes (size >= 1) of deterministic prose-like lines
// ending in a newline; seed picks the text.
func NoteText(seed, size int) []byte {
	var buf bytes.Buffer
	x := uint64(seed)*0x9e3779b97f4a7c15 + 1
	words := []string{"note", "agent", "merge", "the", "commit", "of", "a", "line", "store", "pull", "shared", "text", "plan", "todo"}
	for buf.Len() < size {
		x ^= x << 13 // xorshift64: fast, and the same bytes on every platform
		x ^= x >> 7
		x ^= x << 17
		buf.WriteString(words[x%uint64(len(words))])
		if x%11 == 0 {
			buf.WriteByte('\n')
		} else {
			buf.WriteByte(' ')
		}
	}
	out := buf.Bytes()[:size-1]
	return append(out, '\n')
}
