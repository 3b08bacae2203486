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
)

// What every test shares, set up once by TestMain: the server's binary,
// a running browser and axe-core's source. When something is missing,
// skip says what, and every test skips with it.
var (
	serverBin string          // cmd/promptsd, built for these tests
	browser   context.Context // a chromedp context with a running browser
	axeSource string          // node_modules/axe-core/axe.min.js
	skip      string

	raceEnabled bool // the tests run with -race (race_test.go)
)

// requireVar makes a missing browser or axe-core a failure, not a skip.
const requireVar = "PROMPTS_TEST_REQUIRE_BROWSER"

// axePath is where npm ci puts axe-core, next to package.json.
const axePath = "node_modules/axe-core/axe.min.js"

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	chromium, err := findChromium()
	if err == nil {
		var b []byte
		b, err = os.ReadFile(axePath)
		if errors.Is(err, os.ErrNotExist) {
			err = fmt.Errorf("axe-core is not installed (%s is missing): run npm ci in ui/browsertest", axePath)
		}
		axeSource = string(b)
	}
	if err != nil {
		if os.Getenv(requireVar) == "1" {
			fmt.Fprintf(os.Stderr, "browsertest: %v (%s=1: the browser tests must run)\n", err, requireVar)
			return 1
		}
		skip = err.Error()
		return m.Run()
	}

	dir, err := os.MkdirTemp("", "browsertest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "browsertest:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if serverBin, err = buildServer(dir); err != nil {
		fmt.Fprintln(os.Stderr, "browsertest:", err)
		return 1
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		// CI runs as root, where Chromium's sandbox cannot start.
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("lang", "en-US"),
		chromedp.UserDataDir(filepath.Join(dir, "profile")),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		fmt.Fprintf(os.Stderr, "browsertest: %s does not start: %v\n", chromium, err)
		return 1
	}
	browser = ctx
	return m.Run()
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

// buildServer builds cmd/promptsd into dir, with the race detector when
// the tests have it: the interface's handlers then run under it too.
func buildServer(dir string) (string, error) {
	// The go that runs the tests: go test puts its GOROOT's bin first
	// in PATH.
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("building cmd/promptsd: %w", err)
	}
	bin := filepath.Join(dir, "promptsd")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	cmd := exec.Command(goBin, append(args, "github.com/promptkit/prompts/cmd/promptsd")...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building cmd/promptsd: %v\n%s", err, out)
	}
	return bin, nil
}

// need skips the test when the browser or axe-core is missing.
func need(t *testing.T) {
	t.Helper()
	if skip != "" {
		t.Skip(skip)
	}
}
