//go:build unix

package memstore

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on the file at path (created when
// missing), which another process, or another Open in this one, cannot
// take while it is held. Closing the file releases it.
func lockFile(path string) (io.Closer, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("memstore: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("memstore: %s is in use by another process (or another Open of it): its lock %s is held", path[:len(path)-len(".lock")], path)
		}
		return nil, fmt.Errorf("memstore: locking %s: %w", path, err)
	}
	return f, nil
}
