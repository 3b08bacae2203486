//go:build !unix || aix || solaris

package memstore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// lockData creates the lock file path+".lock" exclusively, and removes it
// on Close: where flock is missing, a lock file left by a crash must be
// removed by hand, and removing one while a Store is open lets a second
// Open write the same file.
func lockData(_ *os.File, path string) (io.Closer, error) {
	lock := path + ".lock"
	f, err := os.OpenFile(lock, os.O_RDWR|os.O_CREATE|os.O_EXCL|noFollow, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("%w (or %s was left by a crash: remove it if no process uses the file)", errInUse(path), lock)
	}
	if err != nil {
		return nil, fmt.Errorf("memstore: %w", err)
	}
	return removing{f}, nil
}

// lockNew does nothing: the lock file covers every file at the path.
func lockNew(*os.File) error { return nil }

type removing struct{ *os.File }

func (r removing) Close() error {
	err := r.File.Close()
	if rerr := os.Remove(r.Name()); err == nil {
		err = rerr
	}
	return err
}
