package dotpromptbench

import (
	"context"
	"reflect"
	"testing"
)

// TestSuiteAgrees checks that what the benchmark compares is the same
// work: both renderers give the same messages for every case of the
// specification suite that the public API can render (all but the six
// cases of partials).
func TestSuiteAgrees(t *testing.T) {
	cases, skipped := loadSpec(t)
	if len(cases) < 100 || skipped != 6 {
		t.Fatalf("loaded %d cases, left out %d: the suite changed", len(cases), skipped)
	}
	for _, c := range cases {
		o, th := prepare(t, c)
		a, err := o.messages(context.Background())
		if err != nil {
			t.Fatalf("%s: ours: %v", c.name, err)
		}
		b, err := th.messages()
		if err != nil {
			t.Fatalf("%s: theirs: %v", c.name, err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s:\nours:\n%stheirs:\n%s", c.name, formatMessages(a), formatMessages(b))
		}
	}
}

// prepare parses a case with ours and compiles it with theirs, once.
func prepare(tb testing.TB, c specCase) (*ours, *theirs) {
	tb.Helper()
	o, err := newOurs(c.body, c.input, c.context, c.history)
	if err != nil {
		tb.Fatalf("%s: ours: %v", c.name, err)
	}
	th, err := newTheirs(c.source, c.input, c.context, c.history, c.schemas)
	if err != nil {
		tb.Fatalf("%s: theirs: %v", c.name, err)
	}
	return o, th
}
