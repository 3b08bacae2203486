package dotpromptbench

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkSuite renders every case of the specification suite once per
// operation (one pass over the suite), each template parsed (ours) or
// compiled (theirs) once beforehand. ns/op is the time of a whole pass.
func BenchmarkSuite(b *testing.B) {
	cases, _ := loadSpec(b)
	os := make([]*ours, len(cases))
	ths := make([]*theirs, len(cases))
	for i, c := range cases {
		os[i], ths[i] = prepare(b, c)
	}
	ctx := context.Background()
	b.Run("impl=ours", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, o := range os {
				if _, err := o.render(ctx); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("impl=theirs", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, th := range ths {
				if _, err := th.render(); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
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
