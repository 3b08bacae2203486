//go:build unix

package memstore

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// noFollow makes an open fail on a symbolic link rather than follow it.
const noFollow = syscall.O_NOFOLLOW

// checkDir refuses a directory, or any directory above it, that any user
// may write without the sticky bit (which /tmp has, so that only an
// entry's owner may remove or rename it): another user could put a file
// of theirs, or a link, in the data file's place, or move a directory on
// its path and put one of theirs there, as ssh checks a key's parents.
func checkDir(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("memstore: %w", err)
	}
	for d := abs; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return fmt.Errorf("memstore: %w", err)
		}
		if m := fi.Mode(); m.Perm()&0o002 != 0 && m&os.ModeSticky == 0 {
			if d == abs {
				return fmt.Errorf("memstore: the directory %s may be written by any user (mode %04o, without the sticky bit that /tmp has): another user could replace the data file; run chmod o-w %s, or keep the file in another directory", d, uint32(m.Perm()), d)
			}
			return fmt.Errorf("memstore: the directory %s, above %s, may be written by any user (mode %04o, without the sticky bit that /tmp has): another user could replace the directories below it; run chmod o-w %s, or keep the file in another directory", d, abs, uint32(m.Perm()), d)
		}
		if parent := filepath.Dir(d); parent == d {
			return nil
		}
	}
}
