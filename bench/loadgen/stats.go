package main

import (
	"slices"
	"time"
)

// Dist summarises repeated measurements of one quantity.
type Dist struct {
	N      int
	Median time.Duration
	P10    time.Duration
	P90    time.Duration
	P99    time.Duration `json:",omitempty"` // 0 in results written before it existed
	Mean   time.Duration `json:",omitempty"`
	Max    time.Duration
}

// summarize returns the distribution of ds; percentiles by nearest rank
// (no interpolation: every figure reported is one that was measured).
func summarize(ds []time.Duration) Dist {
	if len(ds) == 0 {
		return Dist{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	return Dist{N: len(s), Median: rank(s, 0.5), P10: rank(s, 0.1), P90: rank(s, 0.9), P99: rank(s, 0.99),
		Mean: sum / time.Duration(len(s)), Max: s[len(s)-1]}
}

// rank is the nearest-rank percentile q of sorted s.
func rank(s []time.Duration, q float64) time.Duration {
	i := int(q*float64(len(s))+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// ms renders d in milliseconds with a precision that suits its size.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func medianInt(xs []int64) int64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

func maxInt(xs []int64) int64 {
	if len(xs) == 0 {
		return 0
	}
	return slices.Max(xs)
}

// meanInt is the mean of xs, rounded down.
func meanInt(xs []int64) int64 {
	if len(xs) == 0 {
		return 0
	}
	var sum int64
	for _, x := range xs {
		sum += x
	}
	return sum / int64(len(xs))
}
