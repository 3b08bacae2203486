package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// target is one server under load, with its results round by round.
type target struct {
	name     string
	url      string
	proc     *process
	baseline *target // nil for a baseline
	goal     float64 // the least ratio of requests/s to the baseline's; 0: none
	// costGoal, when not 0, is the goal instead: the most a request may
	// cost as a multiple of a baseline's request (the baseline's req/s
	// over t's).
	costGoal float64
	script   string // the wrk Lua script of a request other than a GET of url
	// versus, when not nil, is the same request on an earlier build, in
	// the same rounds: the report gives t's req/s and CPU over its.
	versus  *target
	results []result
}

// median returns the median of xs (the mean of the middle two when even).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func (t *target) series(f func(result) float64) []float64 {
	out := make([]float64, len(t.results))
	for i, r := range t.results {
		out[i] = f(r)
	}
	return out
}

// ratios returns, round by round, f of t over f of its baseline in the
// same round.
func (t *target) ratios(f func(result) float64) []float64 { return t.against(t.baseline, f) }

// against returns, round by round, f of t over f of u in the same round.
func (t *target) against(u *target, f func(result) float64) []float64 {
	out := make([]float64, len(t.results))
	for i, r := range t.results {
		out[i] = f(r) / f(u.results[i])
	}
	return out
}

// costs returns, round by round, its baseline's req/s over t's: what a
// request of t costs as a multiple of one of the baseline.
func (t *target) costs() []float64 {
	rs := t.ratios(rps)
	for i := range rs {
		rs[i] = 1 / rs[i]
	}
	return rs
}

func rps(r result) float64    { return r.rps }
func cycles(r result) float64 { return r.cycles }

// report prints the medians of the rounds and the ratios to the
// baselines: the median of the rounds' ratios, and their range.
func report(w io.Writer, ts []*target, unit string) {
	counted := ts[0].results[0].cycles > 0
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "target\treq/s\tp50\tp99\tratio of req/s (range)\t")
	if counted {
		fmt.Fprintf(tw, "%s/req\tratio of %s/req (range)\t", unit, unit)
	}
	fmt.Fprintln(tw, "goal\t")
	for _, t := range ts {
		p50 := median(t.series(func(r result) float64 { return float64(r.p50) }))
		p99 := median(t.series(func(r result) float64 { return float64(r.p99) }))
		fmt.Fprintf(tw, "%s\t%.0f\t%s\t%s\t", t.name, median(t.series(rps)),
			fmtLatency(time.Duration(p50)), fmtLatency(time.Duration(p99)))
		if t.baseline == nil {
			fmt.Fprint(tw, "baseline\t")
		} else {
			fmt.Fprintf(tw, "%s\t", fmtRatio(t.ratios(rps), t.baseline.name))
		}
		if counted {
			fmt.Fprintf(tw, "%.0f\t", median(t.series(cycles)))
			if t.baseline == nil {
				fmt.Fprint(tw, "baseline\t")
			} else {
				// As a ratio of throughputs: the baseline's cost over t's.
				inv := t.ratios(cycles)
				for i := range inv {
					inv[i] = 1 / inv[i]
				}
				fmt.Fprintf(tw, "%s\t", fmtRatio(inv, t.baseline.name))
			}
		}
		if t.baseline == nil {
			fmt.Fprintln(tw, "\t")
			continue
		}
		if t.costGoal != 0 {
			verdict := "met"
			if median(t.costs()) > t.costGoal {
				verdict = "MISSED"
			}
			fmt.Fprintf(tw, "cost <= %gx: %s\t\n", t.costGoal, verdict)
			continue
		}
		if t.goal == 0 { // measured for its row only
			fmt.Fprintln(tw, "\t")
			continue
		}
		verdict := "met"
		if median(t.ratios(rps)) < t.goal {
			verdict = "MISSED"
		}
		fmt.Fprintf(tw, "req/s >= %.2fx: %s\t\n", t.goal, verdict)
	}
	tw.Flush()
	for _, t := range ts {
		if t.costGoal != 0 {
			cs := t.costs()
			fmt.Fprintf(w, "\n%s costs %.2fx a request of %s (the median of the rounds' ratios of %s's req/s to %s's; range %.2f-%.2f); goal at most %gx\n",
				t.name, median(cs), t.baseline.name, t.baseline.name, t.name, slices.Min(cs), slices.Max(cs), t.costGoal)
			if counted {
				cpu := t.ratios(cycles)
				fmt.Fprintf(w, "by the server's %s per request: %.2fx (range %.2f-%.2f)\n", unit, median(cpu), slices.Min(cpu), slices.Max(cpu))
			}
		}
		if v := t.versus; v != nil {
			rs := t.against(v, rps)
			fmt.Fprintf(w, "%s makes %.2fx the req/s of %s (the median of the rounds' ratios; range %.2f-%.2f)\n",
				t.name, median(rs), v.name, slices.Min(rs), slices.Max(rs))
			if counted {
				cpu := t.against(v, cycles)
				fmt.Fprintf(w, "and costs %.2fx its %s per request (range %.2f-%.2f)\n", median(cpu), unit, slices.Min(cpu), slices.Max(cpu))
			}
		}
	}
	if counted {
		what := "CPU cycles per request (perf stat)"
		if unit != "cycles" {
			what = "CPU time per request, in ns (utime+stime from /proc, 10 ms ticks)"
		}
		fmt.Fprintf(w, "\n%s/req: the server process's %s, whatever CPU time the host grants;\nits ratio is the baseline's cost over the target's, comparable to the ratio of req/s.\n", unit, what)
	}
}

// fmtRatio prints the median of rs and their range.
func fmtRatio(rs []float64, baseline string) string {
	return fmt.Sprintf("%.2fx %s (%.2f-%.2f)", median(rs), baseline, slices.Min(rs), slices.Max(rs))
}

// fmtLatency prints d in microseconds below 10ms, else in milliseconds.
func fmtLatency(d time.Duration) string {
	if d < 10*time.Millisecond {
		return fmt.Sprintf("%.0fµs", float64(d)/float64(time.Microsecond))
	}
	return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
}

// cpuModel returns the model name of the first CPU in /proc/cpuinfo, or
// "unknown CPU".
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}
