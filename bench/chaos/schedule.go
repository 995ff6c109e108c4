//go:build unix

package main

import (
	"math/rand/v2"
	"time"
)

// faultKind names one kind of fault the campaign injects.
type faultKind string

const (
	faultKill    faultKind = "kill-writer"   // SIGKILL a running writer process
	faultOutage  faultKind = "store-outage"  // stop SeaweedFS, then restart it
	faultSlow    faultKind = "slow-store"    // delay every request through the proxy
	faultFreeze  faultKind = "store-freeze"  // SIGSTOP SeaweedFS past the S3 response timeout, then SIGCONT
	faultDisk    faultKind = "disk-full"     // fill the small disk holding a private root
	faultCorrupt faultKind = "corrupt-cache" // flip a byte of a cached pack in a private root
)

// allKinds is the report order.
var allKinds = []faultKind{faultKill, faultFailpoint, faultDouble, faultOutage, faultFreeze, faultSlow, faultDisk, faultCorrupt}

// weights favour cheap faults; an outage costs a SeaweedFS restart (~17 s),
// a freeze outlasts the S3 client's 30 s response timeout.
var weights = map[faultKind]int{faultKill: 30, faultFailpoint: 30, faultDouble: 20, faultOutage: 4, faultFreeze: 2, faultSlow: 16, faultDisk: 15, faultCorrupt: 15}

// event is one scheduled fault. Everything about it is drawn from the
// seed, so a seed replays the same sequence of faults, targets, gaps and
// lengths (process timing, of course, varies).
type event struct {
	Round  int
	Kind   faultKind
	Target int           // writer index (kill, corrupt); unused otherwise
	Gap    time.Duration // wait before injecting, while writers run
	Length time.Duration // how long the fault lasts (outage, slow, disk)
	Aim    time.Duration // kill: delay after a process starts; slow: max delay per chunk
	Crash  bool          // outage: SIGKILL the server instead of a graceful stop
}

// schedule draws rounds events over kinds for a store with writers
// writers. The first len(kinds) events are a permutation of kinds, so even
// a short, time-capped run fires every kind; the rest are drawn by weight.
// diskWriter is the writer whose private root is on the small disk.
func schedule(seed uint64, stream uint64, kinds []faultKind, rounds, writers, diskWriter int) []event {
	rng := rand.New(rand.NewPCG(seed, stream))
	total := 0
	for _, k := range kinds {
		total += weights[k]
	}
	perm := rng.Perm(len(kinds))
	evs := make([]event, 0, rounds)
	for r := range rounds {
		var k faultKind
		if r < len(kinds) {
			k = kinds[perm[r]]
		} else {
			n := rng.IntN(total)
			for _, c := range kinds {
				if n < weights[c] {
					k = c
					break
				}
				n -= weights[c]
			}
		}
		ev := event{Round: r + 1, Kind: k, Target: rng.IntN(writers), Gap: between(rng, 100*time.Millisecond, 600*time.Millisecond)}
		switch k {
		case faultKill:
			ev.Aim = between(rng, 0, 250*time.Millisecond)
		case faultOutage:
			ev.Length = between(rng, time.Second, 4*time.Second)
			ev.Crash = rng.IntN(2) == 0
		case faultFreeze:
			ev.Length = between(rng, 32*time.Second, 40*time.Second)
		case faultSlow:
			ev.Length = between(rng, time.Second, 4*time.Second)
			ev.Aim = between(rng, 200*time.Millisecond, 1500*time.Millisecond)
		case faultDisk:
			ev.Target = diskWriter
			ev.Length = between(rng, 500*time.Millisecond, 3*time.Second)
		}
		evs = append(evs, ev)
	}
	return evs
}

func between(rng *rand.Rand, lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(rng.Int64N(int64(hi-lo)))
}
