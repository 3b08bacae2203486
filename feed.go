package prompts

import "context"

// An Invalidation names what a change touched: a prompt (its fields, its
// versions, what its environments point at) of a project; or, with
// Environment, one of the project's environments (removed), whose every
// read in the project a cache drops.
type Invalidation struct {
	PromptID    string
	ProjectID   string
	Environment Environment // set for a change of the environment itself; PromptID is then ""
}

// A Feed tells a Sink what other processes change in a Store's data
// (sqlstore.Feed follows PostgreSQL's LISTEN/NOTIFY). Run reports to sink
// until ctx ends, and returns ctx's error or the error that made it stop:
//
//   - Recovered once it can see changes, first when it starts to, and
//     again whenever it can again after a loss. Changes made while it
//     could not see them are never reported: Recovered means that
//     anything known before may be stale.
//   - Invalidate with every change it sees, while it sees them.
//   - Lost when it can no longer see changes (its connection broke, or
//     went silent), until the next Recovered.
//
// Until the first Recovered the sink must assume that it sees nothing.
//
// A feed that loses nothing across a loss (package client's follows an
// event stream that resumes from the last event it delivered) reports
// Resumed instead of Recovered after a Lost, to a sink that is a Resumer,
// when it sees changes again and every change made while it could not
// has been, or will be before any later one, reported by Invalidate. It
// reports Recovered when changes were lost for good (the events it
// missed are no longer kept), and to a sink that is no Resumer.
type Feed interface {
	Run(ctx context.Context, sink Sink) error
}

// A Sink is what a Feed reports to (a cache.Store is one). A Feed may call
// its methods from several goroutines; they must return quickly.
type Sink interface {
	Invalidate(Invalidation)
	Lost()
	Recovered()
}

// Sinks returns a Sink that reports to each of sinks in turn, so that one
// Feed tells several of them (a cache and a Store's waiters, say):
//
//	go feed.Run(ctx, prompts.Sinks(c, store))
//
// Nil sinks are skipped.
func Sinks(sinks ...Sink) Sink {
	var out sinkList
	for _, s := range sinks {
		if s != nil {
			out = append(out, s)
		}
	}
	return out
}

type sinkList []Sink

func (l sinkList) Invalidate(ev Invalidation) {
	for _, s := range l {
		s.Invalidate(ev)
	}
}

func (l sinkList) Lost() {
	for _, s := range l {
		s.Lost()
	}
}

func (l sinkList) Recovered() {
	for _, s := range l {
		s.Recovered()
	}
}

// Resumed tells each sink that can keep what it holds so, and the others
// Recovered: a list is a Resumer whatever it holds.
func (l sinkList) Resumed() {
	for _, s := range l {
		if r, ok := s.(Resumer); ok {
			r.Resumed()
		} else {
			s.Recovered()
		}
	}
}

// A Resumer is a Sink that can keep what it holds across a loss that lost
// nothing (a cache.Store is one). Resumed, after a Lost, says that the
// feed sees changes again and that every change made while it could not
// has been, or will be before any later one, reported by Invalidate: what
// the sink held before the loss and has not been told of is still
// current. A feed calls Resumed only on a sink that implements Resumer.
type Resumer interface {
	Sink
	Resumed()
}
