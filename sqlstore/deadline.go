package sqlstore

import (
	"context"

	"github.com/promptkit/prompts"
)

// bounded returns f's result, or at the end of ctx, if that comes first,
// an ErrUnavailable that wraps ctx.Err(). Every exported method that takes
// a context runs its work through it, because lib/pq does not stop at the
// end of a query's context: it sends PostgreSQL a cancel request and goes
// on waiting for the answer, which a database gone silent never sends.
//
// So f runs on a goroutine of its own, which the caller leaves at ctx's
// end; f sees the same ctx, so lib/pq marks its connection broken, and
// database/sql never hands it out again. That goroutine, and the
// connection it holds, end when the database answers or the connection's
// deadline passes (Dialer). A context that can never end, or has ended
// already, needs no goroutine: f runs on the caller's, and its queries
// fail at once.
func bounded[T any](ctx context.Context, f func() (T, error)) (T, error) {
	done := ctx.Done()
	if done == nil || ctx.Err() != nil {
		return f()
	}
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := f()
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-done:
		select {
		case r := <-ch: // f answered as ctx ended: its answer stands
			return r.v, r.err
		default:
		}
		var zero T
		return zero, prompts.ContextDone(ctx.Err())
	}
}

// boundedPage is bounded for a method that returns a page of a list.
func boundedPage[T any](ctx context.Context, f func() ([]T, bool, error)) ([]T, bool, error) {
	type page struct {
		items []T
		more  bool
	}
	p, err := bounded(ctx, func() (page, error) {
		items, more, err := f()
		return page{items, more}, err
	})
	return p.items, p.more, err
}
