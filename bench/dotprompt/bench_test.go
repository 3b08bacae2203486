package dotpromptbench

import (
	"context"
	"fmt"
	"testing"
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
