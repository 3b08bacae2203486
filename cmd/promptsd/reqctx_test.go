package main

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/matryer/is"
)

// A request's context has its deadline without a timer until something
// waits: Err tells it, Done closes at it, and contexts derived from it
// end with it, with no goroutine of their own.
func TestRequestContext(t *testing.T) {
	// In a synctest bubble: the deadlines pass on the bubble's clock, at once.
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		info := requestInfo{start: time.Now()}
		type key struct{}
		parent, cancelParent := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
		defer cancelParent()

		ctx := newRequestContext(parent, info, time.Now().Add(50*time.Millisecond))
		defer ctx.release()
		dl, ok := ctx.Deadline()
		is.True(ok)
		is.True(time.Until(dl) <= 50*time.Millisecond)
		is.Equal(infoFrom(ctx), &ctx.info)                      // the request's info, the context's own
		is.Equal(ctx.Value(key{}), "v")                         // and the parent's values
		is.NoErr(ctx.Err())                                     // not yet
		is.True(!ctx.armed.Load())                              // no timer made by any of that
		time.Sleep(60 * time.Millisecond)                       // the bubble's time: the deadline passes at once
		is.True(errors.Is(ctx.Err(), context.DeadlineExceeded)) // without a timer
		select {
		case <-ctx.Done(): // closed at once once asked for
		case <-time.After(time.Second):
			t.Fatal("Done did not close after the deadline")
		}

		// Armed before the deadline: Done closes at it, and a derived
		// context ends with it.
		ctx2 := newRequestContext(parent, info, time.Now().Add(50*time.Millisecond))
		defer ctx2.release()
		goroutines := runtime.NumGoroutine()
		child, cancelChild := context.WithCancel(ctx2)
		defer cancelChild()
		is.Equal(runtime.NumGoroutine(), goroutines) // no goroutine to propagate the end
		is.Equal(infoFrom(child), &ctx2.info)
		select {
		case <-child.Done():
			is.True(errors.Is(child.Err(), context.DeadlineExceeded))
		case <-time.After(5 * time.Second):
			t.Fatal("the derived context did not end at the deadline")
		}

		// The parent's end ends it, armed or not.
		ctx3 := newRequestContext(parent, info, time.Now().Add(time.Hour))
		defer ctx3.release()
		cancelParent()
		is.True(errors.Is(ctx3.Err(), context.Canceled))
		<-ctx3.Done()

		// A parent's earlier deadline wins.
		early, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		dl, _ = newRequestContext(early, info, time.Now().Add(time.Hour)).Deadline()
		is.True(time.Until(dl) <= time.Second)
	})
}
