package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// On a shared machine the requests per second of a run swing with the CPU
// time the host grants, by ±30% from one run to the next. The CPU cycles a
// server spends per request do not depend on that share, so, when perf
// works, the harness also counts each server's cycles while wrk loads it
// (perf stat -e cycles -p PID): a second estimate of the same cost ratio.
// It has noise of its own: a server that idles now and then spends cycles
// spinning in the Go scheduler.

// countMargin is the time left out at each end of a run: wrk connecting
// and stopping.
const countMargin = 300 * time.Millisecond

// cycleCounter counts the CPU cycles of one process.
type cycleCounter struct {
	perf string
	pid  int
}

// cycleTotal is what one count found.
type cycleTotal struct {
	cycles float64
	window time.Duration
}

// cycleCount waits for a count to end and returns it.
type cycleCount func() (cycleTotal, error)

// checkPerf returns the perf command when it can count cycles here, or
// "" and why not.
func checkPerf() (string, string) {
	path, err := exec.LookPath("perf")
	if err != nil {
		return "", "perf is not installed (apt-get install -y linux-perf)"
	}
	out, err := exec.Command(path, "stat", "-x,", "-e", "cycles", "--", "true").CombinedOutput()
	if err != nil {
		return "", fmt.Sprintf("perf stat fails: %v: %s", err, strings.TrimSpace(string(out)))
	}
	if _, err := parseCycles(string(out)); err != nil {
		return "", "perf stat counts no cycles here (" + err.Error() + ")"
	}
	return path, ""
}

// start counts the process's cycles for window, after delay.
func (c *cycleCounter) start(ctx context.Context, delay, window time.Duration) cycleCount {
	done := make(chan struct{})
	var (
		res cycleTotal
		err error
	)
	go func() {
		defer close(done)
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			err = ctx.Err()
			return
		}
		if c.perf == "" {
			res.window = window
			res.cycles, err = cpuTime(ctx, c.pid, window)
			return
		}
		sleep := strconv.FormatFloat(window.Seconds(), 'f', 3, 64)
		cmd := exec.CommandContext(ctx, c.perf, "stat", "-x,", "-e", "cycles", "-p", strconv.Itoa(c.pid), "--", "sleep", sleep)
		setDeathSignal(cmd)
		out, cerr := cmd.CombinedOutput()
		res.window = window
		if cerr != nil {
			err = fmt.Errorf("%s: %v: %s", cmd, cerr, out)
			return
		}
		res.cycles, err = parseCycles(string(out))
	}()
	return func() (cycleTotal, error) {
		<-done
		return res, err
	}
}

// parseCycles reads the cycles line of perf stat -x, output.
func parseCycles(out string) (float64, error) {
	for line := range strings.SplitSeq(out, "\n") {
		f := strings.Split(line, ",")
		if len(f) >= 3 && (f[2] == "cycles" || strings.HasPrefix(f[2], "cycles:")) {
			v, err := strconv.ParseFloat(f[0], 64)
			if err != nil {
				return 0, fmt.Errorf("cycles %q", f[0])
			}
			return v, nil
		}
	}
	return 0, errors.New("no cycles line")
}

// cpuTime returns the CPU time, in nanoseconds, that process pid spends
// in window (user and system, from /proc/PID/stat, in clock ticks of 10
// ms): where perf cannot count cycles, the same estimate of cost, coarser.
func cpuTime(ctx context.Context, pid int, window time.Duration) (float64, error) {
	before, err := procTicks(pid)
	if err != nil {
		return 0, err
	}
	select {
	case <-time.After(window):
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	after, err := procTicks(pid)
	if err != nil {
		return 0, err
	}
	const tick = 10 * time.Millisecond // USER_HZ is 100 on Linux
	return float64(after-before) * float64(tick), nil
}

// procTicks returns utime+stime of process pid, in clock ticks.
func procTicks(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may hold spaces: fields count
	// from after its closing one. utime and stime are fields 14 and 15.
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("/proc stat: too few fields")
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("/proc stat: utime or stime is not a number")
	}
	return u + s, nil
}
