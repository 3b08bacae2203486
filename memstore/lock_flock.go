//go:build unix && !aix && !solaris

package memstore

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// lockData takes an exclusive flock on the data file f itself, which
// another process, or another Open in this one (flock belongs to an open
// file, not to a process), cannot take while f is open. Closing f
// releases it; the Closer returned does nothing.
func lockData(f *os.File, path string) (io.Closer, error) {
	if err := lockNew(f); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errInUse(path)
		}
		return nil, fmt.Errorf("memstore: locking %s: %w", path, err)
	}
	return nopCloser{}, nil
}

// lockNew locks a compaction's new file before it takes the data file's
// place: no other Open can lock the file at the path in between.
func lockNew(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }
