//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/matryer/is"
)

// apply reads only regular files inside -dir, of at most 1 MiB: a
// symbolic link (to a file outside, to /dev/zero, to a directory), a
// FIFO and a larger file are each refused with an error naming them,
// and nothing is applied.
func TestApplyReadsOnlyRegularFiles(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret.yaml")
	if err := os.WriteFile(outside, []byte("---\nname: Secret\n---\npassword: hunter2"), 0o600); err != nil {
		t.Fatal(err)
	}
	linkedDir := t.TempDir()
	writeFiles(t, linkedDir, map[string]string{"hidden.prompt": "---\n---\nx"})
	for name, make := range map[string]func(t *testing.T, dir string) (path, want string){
		"a link to a file outside": func(t *testing.T, dir string) (string, string) {
			return link(t, outside, dir, "secret.prompt"), "a symbolic link"
		},
		"a link to a file inside": func(t *testing.T, dir string) (string, string) {
			return link(t, filepath.Join(dir, "good.prompt"), dir, "again.prompt"), "a symbolic link"
		},
		"a link to /dev/zero": func(t *testing.T, dir string) (string, string) {
			return link(t, "/dev/zero", dir, "sub/zero.prompt"), "a symbolic link"
		},
		"a link to a directory": func(t *testing.T, dir string) (string, string) {
			link(t, linkedDir, dir, "linked")
			return filepath.Join(dir, "."), "linked is a symbolic link to a directory"
		},
		"a FIFO": func(t *testing.T, dir string) (string, string) {
			p := filepath.Join(dir, "pipe.prompt")
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
			return p, "not a regular file (a named pipe)"
		},
		"a file of 1 MiB and a byte": func(t *testing.T, dir string) (string, string) {
			p := filepath.Join(dir, "big.prompt")
			writeFiles(t, dir, map[string]string{"big.prompt": "---\n---\n" + strings.Repeat("x", 1<<20+1-8)})
			return p, "larger than 1 MiB"
		},
	} {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			s := newServer(t, nil)
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"good.prompt": "---\nname: Good\n---\nfine"})
			path, want := make(t, dir)
			r := cli(t, s, nil, "apply", "-dir", dir)
			is.Equal(r.code, 1)
			is.True(strings.Contains(r.stderr, path+": ")) // the file named
			is.True(strings.Contains(r.stderr, want))      // and why
			is.True(strings.Contains(r.stderr, "nothing was applied"))
			is.Equal(len(s.state(t)), 0) // not even the good file
		})
	}
}

// A file of exactly 1 MiB is read.
func TestApplyReadsAFileOfOneMiB(t *testing.T) {
	is := is.New(t)
	s := newServer(t, nil)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"big.prompt": "---\n---\n" + strings.Repeat("x", 1<<20-8)})
	r := cli(t, s, nil, "apply", "-dir", dir, "-dry-run")
	is.Equal(r.code, 2) // it would be created
	is.True(strings.Contains(r.stdout, "create"))
}

// link makes a symbolic link at dir/name to target, and returns its path.
func link(t *testing.T, target, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
	return p
}
