package prompts_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
)

// recordingSink writes down what it is told.
type recordingSink struct{ calls []string }

func (r *recordingSink) Invalidate(ev prompts.Invalidation) {
	r.calls = append(r.calls, "invalidate "+ev.PromptID+" "+ev.ProjectID)
}
func (r *recordingSink) Lost()      { r.calls = append(r.calls, "lost") }
func (r *recordingSink) Recovered() { r.calls = append(r.calls, "recovered") }

func TestSinksTellsEachSink(t *testing.T) {
	is := is.New(t)
	a, b := &recordingSink{}, &recordingSink{}
	s := prompts.Sinks(a, nil, b)
	s.Recovered()
	s.Invalidate(prompts.Invalidation{PromptID: "p", ProjectID: "j"})
	s.Lost()
	want := []string{"recovered", "invalidate p j", "lost"}
	is.Equal(a.calls, want) // the first sink is told everything, in order
	is.Equal(b.calls, want) // and so is the second; nil is skipped
	prompts.Sinks().Lost()  // no sink: nothing to tell, no panic
}

// resumingSink can keep what it holds across a loss.
type resumingSink struct{ recordingSink }

func (r *resumingSink) Resumed() { r.calls = append(r.calls, "resumed") }

// A list of sinks is a Resumer: a resume reaches those that can resume
// as Resumed, and the others as Recovered.
func TestSinksResume(t *testing.T) {
	is := is.New(t)
	plain, resuming := &recordingSink{}, &resumingSink{}
	s, ok := prompts.Sinks(plain, resuming).(prompts.Resumer)
	is.True(ok)
	s.Resumed()
	is.Equal(plain.calls, []string{"recovered"})
	is.Equal(resuming.calls, []string{"resumed"})
}
