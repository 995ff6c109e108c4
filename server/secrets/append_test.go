package secrets

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/slivingdoc/slivingdoc/server/secrets/secretstest"
)

// An append is decided from its own lines and the few before it; the
// findings are exactly those of the whole comparison, whatever the old
// text held (credentials, the halves of an AWS pair, PEM blocks) and
// wherever the append starts (a new line or the middle of the last one).
func TestAppendFindsWhatTheWholeComparisonFinds(t *testing.T) {
	var pool []string
	for _, c := range secretstest.Cases(7) {
		pool = append(pool, c.Lines...)
		pool = append(pool, strings.Join(c.Lines, "\n"))
	}
	pool = append(pool, "plain text", "", "# heading", "- item", "more words here")
	rng := rand.New(rand.NewPCG(1, 2))
	lines := func(n int) string {
		var sb strings.Builder
		for range n {
			sb.WriteString(pool[rng.IntN(len(pool))])
			sb.WriteString("\n")
		}
		return sb.String()
	}
	found := 0
	for i := range 3000 {
		old := lines(rng.IntN(12))
		if rng.IntN(4) == 0 {
			old = strings.TrimSuffix(old, "\n") // the append continues the last line
		}
		app := lines(1 + rng.IntN(8))
		if rng.IntN(3) == 0 && old != "" {
			app = old[len(old)-min(len(old), 1+rng.IntN(40)):] // a copy of old's tail
		}
		newer := old + app
		got, want := Added([]byte(old), []byte(newer)), addedByLines([]byte(old), []byte(newer))
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("case %d: old %q + %q: found %v, the whole comparison %v", i, old, app, got, want)
		}
		found += len(want)
	}
	if found == 0 {
		t.Fatal("no case added a credential: the test proves nothing")
	}
}

func BenchmarkAddedAppend(b *testing.B) {
	g := newGen(6)
	var sb strings.Builder
	for range 2000 {
		sb.WriteString(g.Str(alnum+"    ", 60) + "\n")
	}
	old := []byte(sb.String())
	newer := append(append([]byte(nil), old...), []byte(strings.Repeat("0123456789abcde\n", 64))...)
	b.SetBytes(int64(len(newer)))
	for b.Loop() {
		Added(old, newer)
	}
}
