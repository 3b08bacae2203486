package ui

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/matryer/is"
)

func TestScriptsStaySmall(t *testing.T) {
	is := is.New(t)
	total := 0
	err := fs.WalkDir(staticFS, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".js") {
			return err
		}
		b, err := staticFS.ReadFile(p)
		total += len(b)
		return err
	})
	is.NoErr(err)
	is.True(total > 0)
	is.True(total <= 30<<10) // the scripts total at most 30 KiB
}
