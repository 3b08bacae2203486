// Package testbin builds the module's commands for tests that run them as
// processes (the browser tests, the MCP interoperability test), and makes
// go test see what the binaries are built from.
package testbin

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// module is the module whose packages Build builds and Sources lists.
const module = "github.com/promptkit/prompts"

// Build builds each package (an import path of the module, such as
// github.com/promptkit/prompts/cmd/promptsd) into dir, named after its
// last element, with the race detector when the tests run with it, and
// returns the binaries' paths in the order given. It then opens the
// packages' sources (Sources), so that go test records them: a change to
// a command is not answered from the test cache.
func Build(dir string, pkgs ...string) ([]string, error) {
	// The go that runs the tests: go test puts its GOROOT's bin first in
	// PATH.
	goBin, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("building %s: %w", strings.Join(pkgs, ", "), err)
	}
	var bins []string
	for _, pkg := range pkgs {
		bin := filepath.Join(dir, path.Base(pkg))
		args := []string{"build", "-o", bin}
		if Race {
			args = append(args, "-race")
		}
		cmd := exec.Command(goBin, append(args, pkg)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("building %s: %v\n%s", pkg, err, out)
		}
		bins = append(bins, bin)
	}
	_, err = Sources(goBin, pkgs...)
	return bins, err
}

// Sources opens, and returns, what the packages are built from in the
// module: each package's directory, each file it embeds, and the
// module's go.mod and go.sum. go test records what a test opens (a
// directory's listing, with each file's size and time; a file's size
// and time), and the test binary imports none of these.
func Sources(goBin string, pkgs ...string) ([]string, error) {
	out, err := exec.Command(goBin, append([]string{"list", "-deps", "-f",
		`{{with .Module}}{{if eq .Path "` + module + `"}}` +
			`{{$.Dir}}{{"\n"}}{{range $.EmbedFiles}}{{$.Dir}}/{{.}}{{"\n"}}{{end}}{{.GoMod}}{{"\n"}}` +
			`{{end}}{{end}}`}, pkgs...)...).Output()
	if err != nil {
		return nil, fmt.Errorf("listing the packages of %s: %w", strings.Join(pkgs, ", "), err)
	}
	paths := map[string]bool{}
	for line := range strings.SplitSeq(string(out), "\n") {
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
