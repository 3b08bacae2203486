package client

import (
	"sync"

	"github.com/promptkit/prompts"
)

// sinks are the sinks the client's feeds report to while they run. A
// write made through the client tells them at once, before it returns, so
// that a cache fed by the client (cache.New(cl), cl.Feed().Run(ctx, c))
// reads the process's own writes at once even when they were made through
// the client itself rather than through the cache. The event of the write
// follows on the stream, some milliseconds later, and drops the same
// entries again, which costs a read.
type sinks struct {
	mu   sync.Mutex
	next uint64
	m    map[uint64]prompts.Sink
}

// add registers s until the returned func is called. Sinks are held by a
// number, not compared: a Sink need not be comparable (prompts.Sinks
// returns a slice).
func (l *sinks) add(s prompts.Sink) (remove func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[uint64]prompts.Sink{}
	}
	l.next++
	id := l.next
	l.m[id] = s
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(l.m, id)
	}
}

// invalidate tells every registered sink of a change. A sink's methods
// return quickly (prompts.Sink), so it is called with l.mu held: a feed
// that ends meanwhile waits for it, and a sink is never told after its
// feed's Run returned.
func (l *sinks) invalidate(inv prompts.Invalidation) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.m {
		s.Invalidate(inv)
	}
}

// wrote records a write of the client's, of a prompt of a project (""
// when its answer does not name the project): the reads after it ask for
// a fresh answer (freshness), and the caches the client feeds drop what
// they hold of the prompt.
func (c *Client) wrote(promptID, projectID string) {
	c.fresh.wrote(promptID, projectID)
	if promptID != "" {
		c.sinks.invalidate(prompts.Invalidation{PromptID: promptID, ProjectID: projectID})
	}
}
