//go:build unix

package memstore

import (
	"fmt"
	"os"
	"syscall"
)

// noFollow makes an open fail on a symbolic link rather than follow it.
const noFollow = syscall.O_NOFOLLOW

// checkDir refuses a directory that any user may write without the
// sticky bit (which /tmp has, so that only a file's owner may remove or
// rename it): another user could put a file of theirs, or a link, in
// the data file's place.
func checkDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("memstore: %w", err)
	}
	if m := fi.Mode(); m.Perm()&0o002 != 0 && m&os.ModeSticky == 0 {
		return fmt.Errorf("memstore: the directory %s may be written by any user (mode %04o, without the sticky bit that /tmp has): another user could replace the data file; run chmod o-w %s, or keep the file in another directory", dir, uint32(m.Perm()), dir)
	}
	return nil
}
