package main

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// budgetClock reads, at a window's start and end, what Budget needs: the
// serve processes' CPU and the store server's (their pids given, the
// server's 0 for none), this process's own CPU, and every core's busy
// time.
type budgetClock struct {
	serves  []*cpuClock
	seaweed int
	start   budgetReading
}

type budgetReading struct {
	serves, seaweed, self, machine time.Duration
	at                             time.Time
}

func startBudget(servePids []int, serverPid int) *budgetClock {
	c := &budgetClock{seaweed: serverPid}
	for _, pid := range servePids {
		c.serves = append(c.serves, newCPUClock(pid))
	}
	c.start = c.read()
	return c
}

func (c *budgetClock) read() budgetReading {
	r := budgetReading{at: time.Now(), machine: machineBusy()}
	for _, s := range c.serves {
		r.serves += s.read()
	}
	if c.seaweed != 0 {
		r.seaweed = statCPU("/proc/" + strconv.Itoa(c.seaweed))
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		r.self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return r
}

// stop ends the window: writersCPU is the CLI processes' CPU, which a
// clock reading serve processes ignores: their whole CPU, read here,
// already holds their calls' CPU, which is what the actors sum for a serve
// row (adding both counted every call twice).
func (c *budgetClock) stop(writersCPU time.Duration) Budget {
	end := c.read()
	for _, s := range c.serves {
		s.close()
	}
	writers := writersCPU
	if len(c.serves) > 0 {
		writers = end.serves - c.start.serves
	}
	return Budget{
		Wall:    end.at.Sub(c.start.at),
		Writers: writers,
		Seaweed: end.seaweed - c.start.seaweed,
		Loadgen: end.self - c.start.self,
		Machine: end.machine - c.start.machine,
		Cores:   runtime.NumCPU(),
	}
}

// machineBusy is every core's non-idle time from /proc/stat's first line
// (user, nice, system, irq, softirq, steal; ticks of USER_HZ, 100).
func machineBusy() time.Duration {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	var ticks int64
	for _, i := range []int{1, 2, 3, 6, 7, 8} {
		v, _ := strconv.ParseInt(f[i], 10, 64)
		ticks += v
	}
	return time.Duration(ticks) * (time.Second / 100)
}
