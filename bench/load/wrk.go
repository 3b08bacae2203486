package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// checkWrk returns wrk's version line, or an error that says how to
// install it.
func checkWrk(cmd string) (string, error) {
	path, err := exec.LookPath(cmd)
	if err != nil {
		return "", fmt.Errorf("%s not found: the harness drives the servers with wrk; install it with `apt-get install -y wrk` (Debian, Ubuntu) or `brew install wrk` (macOS), or name it with -wrk", cmd)
	}
	// wrk -v prints its version and usage, and exits with status 1.
	out, _ := exec.Command(path, "-v").CombinedOutput()
	line, _, _ := strings.Cut(string(out), "\n")
	if !strings.HasPrefix(line, "wrk ") {
		return "", fmt.Errorf("%s -v: not wrk? %q", path, line)
	}
	if i := strings.Index(line, " Copyright"); i > 0 {
		line = line[:i]
	}
	return line, nil
}

// wrk runs the load client.
type wrk struct {
	cmd         string
	threads     int
	connections int
	pin         bool // on the last CPU
}

// result is what one wrk run measured.
type result struct {
	rps      float64
	p50, p99 time.Duration
	requests int64
	cycles   float64 // the server's CPU cycles per request; 0 when not counted
}

// run loads url for d and returns what wrk measured; with script, wrk
// runs that Lua script (which sets the method, headers and body). With counter set, it
// also counts the CPU cycles of that server process meanwhile. Any
// response that is not 2xx or 3xx, or any socket error but a timeout,
// fails the run.
func (w wrk) run(ctx context.Context, url, script string, d time.Duration, counter *cycleCounter) (result, error) {
	secs := max(1, int(d.Round(time.Second)/time.Second))
	args := []string{
		"-t", strconv.Itoa(w.threads),
		"-c", strconv.Itoa(w.connections),
		"-d", strconv.Itoa(secs) + "s",
		"--latency",
		"-H", "X-API-Key: " + apiKey,
	}
	if script != "" {
		args = append(args, "-s", script)
	}
	args = append(args, url)
	name := w.cmd
	if w.pin {
		args = append([]string{"-c", strconv.Itoa(lastCPU()), name}, args...)
		name = "taskset"
	}
	// wrk stops by itself after d; the deadline only bounds a wrk that
	// hangs.
	ctx, cancel := context.WithTimeout(ctx, time.Duration(secs)*time.Second+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	setDeathSignal(cmd)
	var count cycleCount
	if counter != nil {
		// The middle of the run: after wrk has connected, before it stops.
		window := time.Duration(secs)*time.Second - 2*countMargin
		count = counter.start(ctx, countMargin, window)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return result{}, fmt.Errorf("%s: %v\n%s", cmd, err, out)
	}
	res, err := parseWrk(string(out))
	if err != nil {
		return result{}, fmt.Errorf("%v\n%s", err, out)
	}
	if count != nil {
		c, err := count()
		if err != nil {
			return result{}, err
		}
		res.cycles = c.cycles / (res.rps * c.window.Seconds())
	}
	return res, nil
}

// parseWrk reads the output of wrk --latency.
func parseWrk(out string) (result, error) {
	var (
		r                  result
		haveRPS, have50    bool
		have99, haveCount  bool
		non2xx, sockErrors string
	)
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		var err error
		switch {
		case f[0] == "Requests/sec:" && len(f) == 2:
			r.rps, err = strconv.ParseFloat(f[1], 64)
			haveRPS = true
		case f[0] == "50%" && len(f) == 2:
			r.p50, err = parseLatency(f[1])
			have50 = true
		case f[0] == "99%" && len(f) == 2:
			r.p99, err = parseLatency(f[1])
			have99 = true
		case len(f) >= 3 && f[1] == "requests" && f[2] == "in":
			r.requests, err = strconv.ParseInt(f[0], 10, 64)
			haveCount = true
		case strings.HasPrefix(sc.Text(), "  Non-2xx or 3xx responses:"):
			non2xx = f[len(f)-1]
		case f[0] == "Socket" && len(f) > 2 && f[1] == "errors:":
			sockErrors = strings.Join(f[2:], " ")
		}
		if err != nil {
			return result{}, fmt.Errorf("wrk output: %q: %v", sc.Text(), err)
		}
	}
	if !haveRPS || !have50 || !have99 || !haveCount {
		return result{}, errors.New("wrk output: no Requests/sec, 50%, 99% or request count (was --latency given?)")
	}
	if non2xx != "" {
		return result{}, fmt.Errorf("wrk: %s responses were not 2xx or 3xx", non2xx)
	}
	if sockErrors != "" && !onlyTimeouts(sockErrors) {
		return result{}, fmt.Errorf("wrk: socket errors: %s", sockErrors)
	}
	return r, nil
}

// onlyTimeouts reports whether wrk's "connect 0, read 0, write 0, timeout
// N" has no error but timeouts, which show in the latency instead.
func onlyTimeouts(s string) bool {
	for part := range strings.SplitSeq(s, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), " ")
		if k != "timeout" && v != "0" {
			return false
		}
	}
	return true
}

// parseLatency reads a wrk latency: a number with the unit us, ms, s or m.
func parseLatency(s string) (time.Duration, error) {
	units := []struct {
		suffix string
		d      time.Duration
	}{{"us", time.Microsecond}, {"ms", time.Millisecond}, {"s", time.Second}, {"m", time.Minute}}
	for _, u := range units {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			v, err := strconv.ParseFloat(num, 64)
			if err != nil {
				return 0, err
			}
			return time.Duration(v * float64(u.d)), nil
		}
	}
	return 0, fmt.Errorf("latency %q has no known unit", s)
}
