package testbin

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"testing"
)

// Suite is the set-up that the tests of a package running processes
// share (a server built once, a browser started once): made by the first
// test that needs it, undone after the last. A tool the set-up cannot
// find (a browser, node, an npm package) skips the tests, or fails them
// when the suite's RequireVar is 1, as CI sets it; a set-up that fails
// fails them.
type Suite struct {
	Name       string // what messages begin with: "browsertest"
	RequireVar string // PROMPTS_TEST_REQUIRE_…: "1" makes a missing tool a failure
	Why        string // what the tests are, for that failure: "the browser tests"
	// Setup makes what the tests share. It calls Missing for what it
	// cannot find, Defer for what to undo, and returns an error when the
	// set-up failed.
	Setup func(s *Suite) error

	once     sync.Once
	skip     string
	failed   error
	tearDown []func()
}

// Main runs the tests of m, undoes the set-up (what Defer was given, last
// first) and exits: a package's TestMain.
func (s *Suite) Main(m *testing.M) {
	code := m.Run()
	for i := len(s.tearDown) - 1; i >= 0; i-- {
		s.tearDown[i]()
	}
	os.Exit(code)
}

// Need sets the suite up, the first time, and skips t when a tool is
// missing (fails it when RequireVar is 1, or when the set-up failed).
func (s *Suite) Need(t testing.TB) {
	t.Helper()
	s.once.Do(func() {
		if err := s.Setup(s); err != nil && s.skip == "" {
			s.failed = err
		}
	})
	switch {
	case s.failed != nil:
		t.Fatalf("%s: %v", s.Name, s.failed)
	case s.skip != "" && os.Getenv(s.RequireVar) == "1":
		t.Fatalf("%s: %s (%s=1: %s must run)", s.Name, s.skip, s.RequireVar, s.Why)
	case s.skip != "":
		t.Skip(s.skip)
	}
}

// Missing records what the set-up could not find (all of it, joined, in
// one error), so that the tests skip, naming it.
func (s *Suite) Missing(err error) {
	s.skip = strings.ReplaceAll(err.Error(), "\n", "; ")
}

// Defer adds f to what Main undoes after the tests.
func (s *Suite) Defer(f func()) { s.tearDown = append(s.tearDown, f) }

// Buffer is a bytes.Buffer that a process's output and a test may use at
// once.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
