//go:build !linux

package sqlstore

import (
	"syscall"
	"time"
)

// userTimeout is nil where TCP_USER_TIMEOUT is not known: the deadlines on
// reads and writes still hold.
func userTimeout(time.Duration) func(network, address string, c syscall.RawConn) error {
	return nil
}
