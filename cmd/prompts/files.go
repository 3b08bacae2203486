package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// maxFileSize bounds a prompt file that apply reads: 1 MiB, the most a
// server takes in one request by default.
const maxFileSize = 1 << 20

// promptDir is the directory of prompt files that apply reads, as an
// fs.FS for promptfile.ReadDir: it reads regular files only, inside the
// directory, of at most maxFileSize. A symbolic link is refused, naming
// it, wherever it points (a link to a rendered secret would be uploaded
// as a prompt, one to /dev/zero read without end), as is a file that is
// not regular (a FIFO, a device) and one that is too large: each is an
// error of that file, and apply stops before any change.
type promptDir struct {
	dir  string   // as given, for what a link points to
	root *os.Root // every open stays inside it
	fsys fs.FS    // root.FS()
}

func openPromptDir(dir string) (*promptDir, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &promptDir{dir: dir, root: root, fsys: root.FS()}, nil
}

func (d *promptDir) Close() error { return d.root.Close() }

// Open implements fs.FS; apply's reads go through ReadDir and ReadFile.
func (d *promptDir) Open(name string) (fs.File, error) { return d.fsys.Open(name) }

// ReadDir implements fs.ReadDirFS. A symbolic link to a directory is an
// error naming it, so that the files under it are not silently left out
// (the walk does not follow it): the entries are returned all the same.
func (d *promptDir) ReadDir(name string) ([]fs.DirEntry, error) {
	entries, err := fs.ReadDir(d.fsys, name)
	if err != nil {
		return entries, err
	}
	var errs []error
	for _, e := range entries {
		if e.Type()&fs.ModeSymlink == 0 || e.Name()[0] == '.' {
			continue
		}
		p := path.Join(name, e.Name())
		if st, err := os.Stat(filepath.Join(d.dir, filepath.FromSlash(p))); err == nil && st.IsDir() {
			errs = append(errs, fmt.Errorf("%s is a symbolic link to a directory: apply reads only regular files inside -dir", e.Name()))
		}
	}
	return entries, errors.Join(errs...)
}

// ReadFile implements fs.ReadFileFS: a regular file of at most
// maxFileSize, never through a symbolic link.
func (d *promptDir) ReadFile(name string) ([]byte, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrInvalid}
	}
	st, err := d.root.Lstat(name)
	if err != nil {
		return nil, err
	}
	if err := regular(st); err != nil {
		return nil, err
	}
	f, err := d.root.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// What was opened is what was checked (not a link put in its place
	// meanwhile).
	ost, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !os.SameFile(st, ost) {
		return nil, errors.New("the file changed while it was read")
	}
	if err := regular(ost); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxFileSize {
		return nil, errTooLarge
	}
	return b, nil
}

var errTooLarge = fmt.Errorf("larger than %d MiB: apply reads prompt files of at most %d MiB", maxFileSize>>20, maxFileSize>>20)

// regular returns nil for a regular file within maxFileSize, else why
// apply does not read it.
func regular(st fs.FileInfo) error {
	switch m := st.Mode(); {
	case m&fs.ModeSymlink != 0:
		return errors.New("a symbolic link: apply reads only regular files inside -dir")
	case !m.IsRegular():
		return fmt.Errorf("not a regular file (%s): apply reads only regular files", fileType(m))
	case st.Size() > maxFileSize:
		return errTooLarge
	}
	return nil
}

func fileType(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	}
	return "mode " + m.String()
}
