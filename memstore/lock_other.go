//go:build !unix

package memstore

import (
	"fmt"
	"io"
	"os"
)

// lockFile creates the lock file exclusively, and removes it on Close:
// where flock is missing, a lock file left by a crash must be removed by
// hand.
func lockFile(path string) (io.Closer, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("memstore: %s is in use by another process, or was left by a crash: %w", path, err)
	}
	return removing{f}, nil
}

type removing struct{ *os.File }

func (r removing) Close() error {
	err := r.File.Close()
	if rerr := os.Remove(r.Name()); err == nil {
		err = rerr
	}
	return err
}
