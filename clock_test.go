package prompts_test

import (
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/promptkit/prompts"
)

func TestNewIDAfterIsGreater(t *testing.T) {
	is := is.New(t)
	now := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	ahead := prompts.NewID(now.Add(time.Hour))
	id := prompts.NewIDAfter(now, ahead)
	is.True(id > ahead)          // successor of an id from a clock ahead
	is.True(prompts.ValidID(id)) // still a well-formed id
	later := prompts.NewIDAfter(now.Add(2*time.Hour), ahead)
	is.True(later > ahead)                                              // an id from a later clock is kept
	is.Equal(prompts.NewIDAfter(now, "")[:10], prompts.NewID(now)[:10]) // no prev: plain new id with time t
}

func TestValidID(t *testing.T) {
	is := is.New(t)
	id := prompts.NewID(time.Now())
	is.True(prompts.ValidID(id))
	for _, bad := range []string{"", "x", "01ARZ3NDEKTSV4RRFFQ69G5FA", "01arz3ndektsv4rrffq69g5fav", "81ARZ3NDEKTSV4RRFFQ69G5FAV", "01ARZ3NDEKTSV4RRFFQ69G5FAU!", "01ARZ3NDEKTSV4RRFFQ69G5FAI"} {
		is.True(!prompts.ValidID(bad)) // bad is not a well-formed id
	}
}

func TestClockTruncatesToMicrosecondsUTC(t *testing.T) {
	is := is.New(t)
	loc := time.FixedZone("X", 3600)
	c := prompts.Clock(func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 123456789, loc) })
	got := c.Now()
	is.Equal(got.Location(), time.UTC)
	is.Equal(got.Nanosecond(), 123456000)
}
