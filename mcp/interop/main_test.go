package interop_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/promptkit/prompts/internal/testbin"
)

// What every test shares, set up once by the first test (need): node, the
// SDK's version, and the binaries of cmd/promptsd and cmd/prompts. When
// node or the SDK is missing, skip says what, and every test skips with
// it. The set-up runs within a test, not in TestMain before m.Run, so
// that go test records what it looks at (the variables, node's path, the
// SDK's package.json, client.mjs, the commands' sources): a run that
// skipped is not answered from the test cache after npm ci.
var (
	nodeBin   string // node
	sdkVer    string // the SDK's version, as installed
	serverBin string // cmd/promptsd, built for these tests
	cliBin    string // cmd/prompts, built for these tests
)

// suite sets up what the tests share; need(t) asks for it, and skips the
// test when node or the SDK is missing (fails it when
// PROMPTS_TEST_REQUIRE_NODE is 1, or when the set-up failed).
var suite = &testbin.Suite{Name: "interop", RequireVar: "PROMPTS_TEST_REQUIRE_NODE", Why: "the interoperability tests", Setup: setup}

func need(t *testing.T) { t.Helper(); suite.Need(t) }

// sdkPackage is where npm ci puts the SDK, next to package.json.
const sdkPackage = "node_modules/@modelcontextprotocol/sdk"

func TestMain(m *testing.M) { suite.Main(m) }

// setup finds node and the SDK and builds the commands.
func setup(s *testbin.Suite) error {
	// Both looked at, whatever the first says: the skip names all that
	// is missing, and go test records both.
	var errNode error
	nodeBin, errNode = findNode()
	var errSDK error
	sdkVer, errSDK = installedSDK()
	if err := errors.Join(errNode, errSDK); err != nil {
		s.Missing(err)
		return nil
	}
	// node reads the script; go test records it here.
	if _, err := os.Stat("client.mjs"); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "interop-")
	if err != nil {
		return err
	}
	s.Defer(func() { os.RemoveAll(dir) })
	bins, err := testbin.Build(dir, "github.com/promptkit/prompts/cmd/promptsd", "github.com/promptkit/prompts/cmd/prompts")
	if err != nil {
		return err
	}
	serverBin, cliBin = bins[0], bins[1]
	return nil
}

// findNode returns $PROMPTS_TEST_NODE, or node on PATH.
func findNode() (string, error) {
	if p := os.Getenv("PROMPTS_TEST_NODE"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("PROMPTS_TEST_NODE: %w", err)
		}
		return p, nil
	}
	p, err := exec.LookPath("node")
	if err != nil {
		return "", errors.New("no node found on PATH: install Node.js 20 or later (apt-get install nodejs npm), or set PROMPTS_TEST_NODE to a node binary")
	}
	return p, nil
}

// installedSDK returns the version of the SDK that npm ci installed, and
// an error unless it is the one package-lock.json pins.
func installedSDK() (string, error) {
	var installed, lock struct {
		Version  string `json:"version"`
		Packages map[string]struct {
			Version string `json:"version"`
		} `json:"packages"`
	}
	b, err := os.ReadFile(sdkPackage + "/package.json")
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("the TypeScript SDK is not installed (%s is missing): run npm ci in mcp/interop", sdkPackage)
	}
	if err == nil {
		err = json.Unmarshal(b, &installed)
	}
	if err != nil {
		return "", fmt.Errorf("the TypeScript SDK: %w", err)
	}
	b, err = os.ReadFile("package-lock.json")
	if err == nil {
		err = json.Unmarshal(b, &lock)
	}
	if err != nil {
		return "", fmt.Errorf("package-lock.json: %w", err)
	}
	if pinned := lock.Packages[sdkPackage].Version; installed.Version != pinned {
		return "", fmt.Errorf("the TypeScript SDK installed is %s, package-lock.json pins %s: run npm ci in mcp/interop", installed.Version, pinned)
	}
	return installed.Version, nil
}
