package testbin_test

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts/internal/testbin"
)

// The sources recorded for the test cache are the server's own, its web
// interface's templates among them, and the module's go.mod and go.sum.
func TestSources(t *testing.T) {
	is := is.New(t)
	goBin, err := exec.LookPath("go")
	is.NoErr(err)
	paths, err := testbin.Sources(goBin, "github.com/promptkit/prompts/cmd/promptsd")
	is.NoErr(err)
	root, err := filepath.Abs("../..")
	is.NoErr(err)
	for _, want := range []string{"cmd/promptsd", "ui", "ui/templates/layout.html", "httpapi", "go.mod", "go.sum"} {
		is.True(slices.Contains(paths, filepath.Join(root, want))) // recorded
	}
	is.True(!slices.Contains(paths, filepath.Join(root, "client"))) // only what the server is built from
}

// A command is built with the race detector exactly when the tests run
// with it.
func TestBuildRace(t *testing.T) {
	is := is.New(t)
	bins, err := testbin.Build(t.TempDir(), "github.com/promptkit/prompts/cmd/prompts")
	is.NoErr(err)
	is.Equal(filepath.Base(bins[0]), "prompts")
	out, err := exec.Command("go", "version", "-m", bins[0]).Output()
	is.NoErr(err)
	is.Equal(strings.Contains(string(out), "-race=true"), testbin.Race) // built as the tests run
}
