package browsertest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/matryer/is"
)

// What every test shares, set up once by the first test that needs it
// (need): the server's binary, a running browser and axe-core's source.
// When something is missing, skip says what, and every test skips with
// it. The set-up runs within a test, not in TestMain before m.Run, so
// that go test records what it looks at (the variables, the browser's
// path, axe-core's file, the server's sources): a run that skipped is
// not answered from the test cache once they change (npm ci, say).
var (
	setUp     sync.Once
	serverBin string          // cmd/promptsd, built for these tests
	browser   context.Context // a chromedp context with a running browser
	axeSource string          // node_modules/axe-core/axe.min.js
	skip      string
	failed    error    // a set-up that failed
	tearDown  []func() // what TestMain undoes after the tests, last first

	raceEnabled bool // the tests run with -race (race_test.go)
)

// requireVar makes a missing browser or axe-core a failure, not a skip.
const requireVar = "PROMPTS_TEST_REQUIRE_BROWSER"

// axePath is where npm ci puts axe-core, next to package.json.
const axePath = "node_modules/axe-core/axe.min.js"

func TestMain(m *testing.M) {
	code := m.Run()
	for i := len(tearDown) - 1; i >= 0; i-- {
		tearDown[i]()
	}
	os.Exit(code)
}

// need sets up what the tests share, the first time, and skips the test
// when the browser or axe-core is missing (fails it when requireVar is
// 1, or when the set-up failed).
func need(t *testing.T) {
	t.Helper()
	setUp.Do(setup)
	switch {
	case failed != nil:
		t.Fatalf("browsertest: %v", failed)
	case skip != "" && os.Getenv(requireVar) == "1":
		t.Fatalf("browsertest: %s (%s=1: the browser tests must run)", skip, requireVar)
	case skip != "":
		t.Skip(skip)
	}
}

// setup finds the browser and axe-core, builds the server and starts the
// browser; it sets skip when something is missing, failed when the
// set-up failed.
func setup() {
	// Both looked at, whatever the first says: the skip names all that
	// is missing, and go test records both.
	chromium, errChromium := findChromium()
	b, errAxe := os.ReadFile(axePath)
	if errors.Is(errAxe, os.ErrNotExist) {
		errAxe = fmt.Errorf("axe-core is not installed (%s is missing): run npm ci in ui/browsertest", axePath)
	}
	axeSource = string(b)
	if err := errors.Join(errChromium, errAxe); err != nil {
		skip = strings.ReplaceAll(err.Error(), "\n", "; ")
		return
	}

	dir, err := os.MkdirTemp("", "browsertest-")
	if err != nil {
		failed = err
		return
	}
	tearDown = append(tearDown, func() { os.RemoveAll(dir) })
	if serverBin, err = buildServer(dir); err != nil {
		failed = err
		return
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
	tearDown = append(tearDown, cancelAlloc)
	ctx, cancel := chromedp.NewContext(alloc)
	tearDown = append(tearDown, cancel)
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		failed = fmt.Errorf("%s does not start: %v", chromium, err)
		return
	}
	browser = ctx
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
	_, err = recordSources(goBin)
	return bin, err
}

// recordSources looks at the module's packages that the server is built
// from (each directory, and each file it embeds) and at the module's
// go.mod and go.sum, so that go test records them: the test binary
// imports none of them, and without this a change to the server, its
// interface's templates among them, would be answered from the test
// cache. (go test hashes an opened directory's listing, with each file's
// size and time, and a file's size and time.)
func recordSources(goBin string) ([]string, error) {
	out, err := exec.Command(goBin, "list", "-deps", "-f",
		`{{with .Module}}{{if eq .Path "github.com/promptkit/prompts"}}`+
			`{{$.Dir}}{{"\n"}}{{range $.EmbedFiles}}{{$.Dir}}/{{.}}{{"\n"}}{{end}}{{.GoMod}}{{"\n"}}`+
			`{{end}}{{end}}`,
		"github.com/promptkit/prompts/cmd/promptsd").Output()
	if err != nil {
		return nil, fmt.Errorf("listing the server's packages: %w", err)
	}
	paths := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		if line == "" {
			continue
		}
		paths[line] = true
		if strings.HasSuffix(line, "go.mod") {
			paths[strings.TrimSuffix(line, "mod")+"sum"] = true
		}
	}
	for p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		if st, err := f.Stat(); err == nil && st.IsDir() {
			_, _ = f.ReadDir(-1)
		}
		f.Close()
	}
	return slices.Sorted(maps.Keys(paths)), nil
}

// The sources recorded for the test cache are the server's own, its web
// interface's templates among them, and the module's go.mod and go.sum.
func TestRecordSources(t *testing.T) {
	is := is.New(t)
	goBin, err := exec.LookPath("go")
	is.NoErr(err)
	paths, err := recordSources(goBin)
	is.NoErr(err)
	root, err := filepath.Abs("../..")
	is.NoErr(err)
	for _, want := range []string{"cmd/promptsd", "ui", "ui/templates/layout.html", "httpapi", "go.mod", "go.sum"} {
		is.True(slices.Contains(paths, filepath.Join(root, want))) // recorded
	}
	is.True(!slices.Contains(paths, filepath.Join(root, "client"))) // only what the server is built from
}
