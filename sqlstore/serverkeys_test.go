package sqlstore_test

import (
	"context"
	"sync"
	"testing"

	"github.com/matryer/is"
)

// The first hash kept under a name stays: later calls, and calls at the
// same moment, get it back; another name keeps its own.
func TestKeepServerKey(t *testing.T) {
	is := is.New(t)
	s := newSQLStore(t)
	ctx := context.Background()
	const a, b = "sha256:aaaa", "sha256:bbbb"
	kept, err := s.KeepServerKey(ctx, "default", a)
	is.NoErr(err)
	is.Equal(kept, a)
	kept, err = s.KeepServerKey(ctx, "default", b)
	is.NoErr(err)
	is.Equal(kept, a) // the first stays
	kept, err = s.KeepServerKey(ctx, "other", b)
	is.NoErr(err)
	is.Equal(kept, b)

	// Eight first starts at once: one hash for all.
	got := make([]string, 8)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			var err error
			if got[i], err = s.KeepServerKey(ctx, "race", string(rune('a'+i))); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for _, h := range got {
		is.Equal(h, got[0])
	}
}
