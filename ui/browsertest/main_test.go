package browsertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/promptkit/prompts/internal/testbin"
)

// What every test shares, set up once by the first test that needs it
// (need): the server's binary, a running browser and axe-core's source.
// When something is missing, the suite says what, and every test skips
// with it. The set-up runs within a test, not in TestMain before m.Run, so
// that go test records what it looks at (the variables, the browser's
// path, axe-core's file, the server's sources): a run that skipped is
// not answered from the test cache once they change (npm ci, say).
var (
	serverBin string          // cmd/promptsd, built for these tests
	browser   context.Context // a chromedp context with a running browser
	axeSource string          // node_modules/axe-core/axe.min.js
)

// suite sets up what the tests share; need(t) asks for it, and skips the
// test when the browser or axe-core is missing (fails it when
// PROMPTS_TEST_REQUIRE_BROWSER is 1, or when the set-up failed).
var suite = &testbin.Suite{Name: "browsertest", RequireVar: "PROMPTS_TEST_REQUIRE_BROWSER", Why: "the browser tests", Setup: setup}

func need(t *testing.T) { t.Helper(); suite.Need(t) }

// axePath is where npm ci puts axe-core, next to package.json.
const axePath = "node_modules/axe-core/axe.min.js"

func TestMain(m *testing.M) { suite.Main(m) }

// setup finds the browser and axe-core, builds the server and starts the
// browser.
func setup(s *testbin.Suite) error {
	// Both looked at, whatever the first says: the skip names all that
	// is missing, and go test records both.
	chromium, errChromium := findChromium()
	b, errAxe := os.ReadFile(axePath)
	if errors.Is(errAxe, os.ErrNotExist) {
		errAxe = fmt.Errorf("axe-core is not installed (%s is missing): run npm ci in ui/browsertest", axePath)
	}
	axeSource = string(b)
	if err := errors.Join(errChromium, errAxe); err != nil {
		s.Missing(err)
		return nil
	}

	dir, err := os.MkdirTemp("", "browsertest-")
	if err != nil {
		return err
	}
	s.Defer(func() { os.RemoveAll(dir) })
	// With the race detector when the tests have it: the interface's
	// handlers then run under it too.
	bins, err := testbin.Build(dir, "github.com/promptkit/prompts/cmd/promptsd")
	if err != nil {
		return err
	}
	serverBin = bins[0]

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		// CI runs as root, where Chromium's sandbox cannot start.
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("lang", "en-US"),
		chromedp.UserDataDir(filepath.Join(dir, "profile")),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	s.Defer(cancelAlloc)
	ctx, cancel := chromedp.NewContext(alloc)
	s.Defer(cancel)
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		return fmt.Errorf("%s does not start: %v", chromium, err)
	}
	browser = ctx
	return nil
}

// findChromium returns the browser to drive: $PROMPTS_TEST_CHROMIUM, or
// Debian's chromium.
func findChromium() (string, error) {
	if p := os.Getenv("PROMPTS_TEST_CHROMIUM"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("PROMPTS_TEST_CHROMIUM: %w", err)
		}
		return p, nil
	}
	for _, p := range []string{"/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p, nil
	}
	return "", errors.New("no Chromium found (looked for /usr/bin/chromium): install it with apt-get install chromium, or set PROMPTS_TEST_CHROMIUM to a Chrome or Chromium binary")
}
