package dotpromptbench

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"
)

// BenchmarkSuite renders every case of the specification suite once per
// operation (one pass over the suite), each template parsed (ours) or
// compiled (theirs) once beforehand. ns/op is the time of a whole pass.
// set=all is the 111 cases; set=body the 90 whose source has no front
// matter, where theirs does no metadata work at render (with front
// matter it merges the metadata and compiles Picoschema at every render;
// ours leaves both to when a version is stored).
func BenchmarkSuite(b *testing.B) {
	cases, _ := loadSpec(b)
	ctx := context.Background()
	for _, set := range []string{"all", "body"} {
		var os []*ours
		var ths []*theirs
		for _, c := range cases {
			if set == "body" && c.body != c.source {
				continue
			}
			o, th := prepare(b, c)
			os, ths = append(os, o), append(ths, th)
		}
		b.Run("set="+set+"/impl=ours", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, o := range os {
					if _, err := o.render(ctx); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(len(os)), "templates")
		})
		b.Run("set="+set+"/impl=theirs", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, th := range ths {
					if _, err := th.render(); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(len(ths)), "templates")
		})
	}
}

// BenchmarkCase renders each case on its own, for the ratio template by
// template (benchstat -col /impl gives their geometric mean).
func BenchmarkCase(b *testing.B) {
	cases, _ := loadSpec(b)
	ctx := context.Background()
	for i, c := range cases {
		o, th := prepare(b, c)
		name := fmt.Sprintf("case=%03d", i)
		b.Run("impl=ours/"+name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := o.render(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("impl=theirs/"+name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := th.render(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAlternating measures the two side by side, for a host whose
// speed changes from one second to the next (a shared machine): each
// round times one pass over the suite with ours, then one with theirs,
// and the benchmark reports the medians of the rounds (ns per pass) and
// the median of their ratios, each taken between two passes back to back.
// set=all and set=body as in BenchmarkSuite.
func BenchmarkAlternating(b *testing.B) {
	cases, _ := loadSpec(b)
	ctx := context.Background()
	for _, set := range []string{"all", "body"} {
		var os []*ours
		var ths []*theirs
		for _, c := range cases {
			if set == "body" && c.body != c.source {
				continue
			}
			o, th := prepare(b, c)
			os, ths = append(os, o), append(ths, th)
		}
		b.Run("set="+set, func(b *testing.B) {
			var tOurs, tTheirs, ratio []float64
			for b.Loop() {
				start := time.Now()
				for _, o := range os {
					if _, err := o.render(ctx); err != nil {
						b.Fatal(err)
					}
				}
				mid := time.Now()
				for _, th := range ths {
					if _, err := th.render(); err != nil {
						b.Fatal(err)
					}
				}
				end := time.Now()
				o, t := float64(mid.Sub(start)), float64(end.Sub(mid))
				tOurs, tTheirs, ratio = append(tOurs, o), append(tTheirs, t), append(ratio, t/o)
			}
			b.ReportMetric(median(tOurs), "ours-ns/pass")
			b.ReportMetric(median(tTheirs), "theirs-ns/pass")
			b.ReportMetric(median(ratio), "x-faster")
		})
	}
}

// BenchmarkGeomean is the same template by template: each round renders
// every case 20 times with ours, then 20 times with theirs; the ratio of
// a case is the median over the rounds, and the benchmark reports their
// geometric mean (every template weighs the same, however long it takes)
// with the smallest and the largest (named with -v). set=all and
// set=body as in BenchmarkSuite.
func BenchmarkGeomean(b *testing.B) {
	const reps = 20
	all, _ := loadSpec(b)
	ctx := context.Background()
	for _, set := range []string{"all", "body"} {
		var cases []specCase
		for _, c := range all {
			if set == "all" || c.body == c.source {
				cases = append(cases, c)
			}
		}
		os := make([]*ours, len(cases))
		ths := make([]*theirs, len(cases))
		for i, c := range cases {
			os[i], ths[i] = prepare(b, c)
		}
		b.Run("set="+set, func(b *testing.B) {
			ratios := make([][]float64, len(cases))
			for b.Loop() {
				for i := range cases {
					start := time.Now()
					for range reps {
						if _, err := os[i].render(ctx); err != nil {
							b.Fatal(err)
						}
					}
					mid := time.Now()
					for range reps {
						if _, err := ths[i].render(); err != nil {
							b.Fatal(err)
						}
					}
					end := time.Now()
					ratios[i] = append(ratios[i], float64(end.Sub(mid))/float64(mid.Sub(start)))
				}
			}
			logSum, lo, hi, iLo, iHi := 0.0, math.Inf(1), 0.0, 0, 0
			for i, r := range ratios {
				m := median(r)
				logSum += math.Log(m)
				if m < lo {
					lo, iLo = m, i
				}
				if m > hi {
					hi, iHi = m, i
				}
			}
			b.ReportMetric(math.Exp(logSum/float64(len(cases))), "geomean-x-faster")
			b.ReportMetric(lo, "min-x")
			b.ReportMetric(hi, "max-x")
			b.Logf("smallest ratio: %s; largest: %s", cases[iLo].name, cases[iHi].name)
		})
	}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}
