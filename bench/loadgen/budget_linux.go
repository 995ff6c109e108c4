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
// serve processes' CPU (their pids given), SeaweedFS's processes (the
// children of this process named weed), this process's own CPU, and
// every core's busy time.
type budgetClock struct {
	serves  []*cpuClock
	seaweed []int
	start   budgetReading
}

type budgetReading struct {
	serves, seaweed, self, machine time.Duration
	at                             time.Time
}

func startBudget(servePids []int) *budgetClock {
	c := &budgetClock{seaweed: childrenNamed("weed")}
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
	for _, pid := range c.seaweed {
		r.seaweed += statCPU("/proc/" + strconv.Itoa(pid))
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		r.self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return r
}

// stop ends the window: writersCPU is the CLI processes' CPU (0 for serve
// rows, whose processes were read here).
func (c *budgetClock) stop(writersCPU time.Duration) Budget {
	end := c.read()
	for _, s := range c.serves {
		s.close()
	}
	return Budget{
		Wall:    end.at.Sub(c.start.at),
		Writers: writersCPU + end.serves - c.start.serves,
		Seaweed: end.seaweed - c.start.seaweed,
		Loadgen: end.self - c.start.self,
		Machine: end.machine - c.start.machine,
		Cores:   runtime.NumCPU(),
	}
}

// childrenNamed returns the pids of this process's children whose command
// is name.
func childrenNamed(name string) []int {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	self := strconv.Itoa(os.Getpid())
	var pids []int
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + n + "/stat")
		if err != nil {
			continue
		}
		s := string(data)
		open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || closing < open {
			continue
		}
		f := strings.Fields(s[closing+1:])
		if s[open+1:closing] == name && len(f) > 1 && f[1] == self {
			pids = append(pids, pid)
		}
	}
	return pids
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
