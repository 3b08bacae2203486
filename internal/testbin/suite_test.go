package testbin_test

import (
	"errors"
	"fmt"
	"runtime"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts/internal/testbin"
)

// fakeT records what a test would have done: skipped or failed, and
// why; like testing.T, either ends the test's goroutine.
type fakeT struct {
	testing.TB
	skipped, failed string
}

func (f *fakeT) Helper() {}

func (f *fakeT) Skip(args ...any) {
	f.skipped = fmt.Sprint(args...)
	runtime.Goexit()
}

func (f *fakeT) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// need runs s.Need as a test would, and returns what it did.
func need(s *testbin.Suite) *fakeT {
	f := &fakeT{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Need(f)
	}()
	<-done
	return f
}

// A suite sets up once; a missing tool skips, or fails with the
// variable that requires it set; a failed set-up fails; nothing missing
// runs the test.
func TestSuite(t *testing.T) {
	is := is.New(t)
	const requireVar = "PROMPTS_TEST_REQUIRE_SUITE_TEST"
	missing := func(s *testbin.Suite) error {
		s.Missing(errors.Join(errors.New("no node"), errors.New("no SDK")))
		return nil
	}

	calls := 0
	s := &testbin.Suite{Name: "x", RequireVar: requireVar, Why: "the x tests", Setup: func(s *testbin.Suite) error { calls++; return missing(s) }}
	f := need(s)
	is.Equal(f.skipped, "no node; no SDK") // skipped, naming all that is missing
	is.Equal(f.failed, "")
	need(s)
	is.Equal(calls, 1) // set up once

	t.Setenv(requireVar, "1")
	f = need(&testbin.Suite{Name: "x", RequireVar: requireVar, Why: "the x tests", Setup: missing})
	is.Equal(f.failed, "x: no node; no SDK ("+requireVar+"=1: the x tests must run)") // required: a failure
	is.Equal(f.skipped, "")

	f = need(&testbin.Suite{Name: "x", RequireVar: requireVar, Setup: func(*testbin.Suite) error { return errors.New("build failed") }})
	is.Equal(f.failed, "x: build failed") // a set-up that failed fails

	f = need(&testbin.Suite{Name: "x", RequireVar: requireVar, Setup: func(*testbin.Suite) error { return nil }})
	is.Equal(*f, fakeT{}) // nothing missing: the test runs
}

// Buffer takes writes from several goroutines while it is read.
func TestBuffer(t *testing.T) {
	is := is.New(t)
	var b testbin.Buffer
	done := make(chan struct{})
	for range 4 {
		go func() {
			for range 100 {
				fmt.Fprint(&b, "x")
			}
			done <- struct{}{}
		}()
	}
	_ = b.String()
	for range 4 {
		<-done
	}
	is.Equal(len(b.String()), 400) // every write kept
}
