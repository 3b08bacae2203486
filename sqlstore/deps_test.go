package sqlstore_test

import (
	"go/build"
	"path/filepath"
	"strings"
	"testing"
)

// A backend does not depend on a decorator: sqlstore (not its tests)
// imports no package cache, directly or through another package of the
// module. The Feed's vocabulary lives in the root package.
func TestNoDependencyOnCache(t *testing.T) {
	const module = "github.com/promptkit/prompts"
	seen := map[string]bool{}
	var walk func(path, dir string, via []string)
	walk = func(path, dir string, via []string) {
		if seen[path] {
			return
		}
		seen[path] = true
		via = append(via, path)
		if path == module+"/cache" {
			t.Errorf("sqlstore depends on package cache: %s", strings.Join(via, " -> "))
			return
		}
		pkg, err := build.ImportDir(dir, 0)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, imp := range pkg.Imports {
			rel, ok := strings.CutPrefix(imp, module)
			if !ok || (rel != "" && rel[0] != '/') {
				continue // outside the module, which cannot import it
			}
			walk(imp, filepath.Join("..", filepath.FromSlash(rel)), via)
		}
	}
	walk(module+"/sqlstore", ".", nil)
	if !seen[module] {
		t.Fatal("the walk did not reach the root package: it proves nothing")
	}
}
