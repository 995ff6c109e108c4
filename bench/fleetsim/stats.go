package fleetsim

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Percentiles summarises a set of durations (nearest rank).
type Percentiles struct {
	N                  int
	P50, P90, P99, Max time.Duration
	Mean               time.Duration
}

func percentiles(ds []time.Duration) Percentiles {
	if len(ds) == 0 {
		return Percentiles{}
	}
	s := slices.Sorted(slices.Values(ds))
	rank := func(q float64) time.Duration {
		i := int(q*float64(len(s))+0.999999) - 1
		return s[min(max(i, 0), len(s)-1)]
	}
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	return Percentiles{N: len(s), P50: rank(0.50), P90: rank(0.90), P99: rank(0.99), Max: s[len(s)-1], Mean: sum / time.Duration(len(s))}
}

// appendLoad appends the 1-minute load average from /proc/loadavg, when
// there is one.
func appendLoad(l []float64) []float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return l
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return l
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return l
	}
	return append(l, v)
}
