package sqlstore

import (
	"context"
	"sync"
)

// writeQueue lets the goroutines that write versions of one prompt through
// a Store take turns. A writer takes its turn before it makes the
// version's id, so that the writers of one prompt make their ids in the
// order in which they reach the prompt's row lock; without turns, several
// goroutines make ids, then reach the row lock in another order, and every
// one that comes after a larger id must retry in a transaction (see
// Store.CreateVersion). Writers of other prompts do not wait for each
// other; writers in other processes (or of another Store) still meet only
// at the row lock.
type writeQueue struct {
	mu    sync.Mutex
	slots map[string]*writeSlot // prompt id -> its slot, while in use
}

// writeSlot is the queue of one prompt's writers.
type writeSlot struct {
	token chan struct{} // holds a value while a writer has the turn
	users int           // writers holding or waiting for the turn; guarded by writeQueue.mu
}

// wait returns when it is the caller's turn to write a version of the
// prompt, or with ctx's error when ctx ends first. After a nil error, the
// caller must call done with the slot.
func (q *writeQueue) wait(ctx context.Context, promptID string) (*writeSlot, error) {
	q.mu.Lock()
	if q.slots == nil {
		q.slots = make(map[string]*writeSlot)
	}
	w := q.slots[promptID]
	if w == nil {
		w = &writeSlot{token: make(chan struct{}, 1)}
		q.slots[promptID] = w
	}
	w.users++
	q.mu.Unlock()
	select {
	case w.token <- struct{}{}:
		return w, nil
	case <-ctx.Done():
		q.leave(promptID, w)
		return nil, ctx.Err()
	}
}

// done ends the caller's turn.
func (q *writeQueue) done(promptID string, w *writeSlot) {
	<-w.token
	q.leave(promptID, w)
}

func (q *writeQueue) leave(promptID string, w *writeSlot) {
	q.mu.Lock()
	w.users--
	if w.users == 0 {
		delete(q.slots, promptID)
	}
	q.mu.Unlock()
}
