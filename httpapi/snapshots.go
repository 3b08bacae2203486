package httpapi

import (
	"errors"
	"net/http"

	"github.com/promptkit/prompts/cache"
)

// readSnapshot is GET /projects/{project_id}/snapshot: every prompt of
// the project with the version active in each environment, as
// cache.Snapshot holds them, in cache.SnapshotFormat. It reads the store
// under the server's cache, if any: the snapshot is consistent (each
// prompt as of one revision) and does not crowd out of the cache what
// applications read. It is written as it is read (cache.WriteSnapshot),
// snapshotChunk bytes at a time, never held whole; a snapshot smaller
// than that is answered with its Content-Length. A project past the
// bounds of cache.TakeSnapshot is 413, naming the bound, when that is
// known before the answer starts; a failure after it started (the text
// passing its bound, the store failing) cuts the answer short, so that no
// client takes what it got for a whole snapshot.
func (h *Handler) readSnapshot() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, a Access) {
		if h.refused(w) {
			return
		}
		id := r.PathValue("project_id")
		if !a.Allows(id) {
			h.notFoundAs(w, "project")
			return
		}
		store := h.store
		if h.fresh != nil {
			store = h.fresh
		}
		sw := &snapshotWriter{h: h, w: w, buf: make([]byte, 0, snapshotChunk)}
		err := cache.WriteSnapshot(r.Context(), sw, store, id)
		switch {
		case sw.failed != nil: // the client left, or the answer was refused (503)
		case err == nil:
			sw.finish()
		case sw.started:
			h.report(r, err)
			h.log.ErrorContext(r.Context(), "httpapi: a snapshot failed while it was written; its answer is cut short", "project_id", id, "err", err)
			panic(http.ErrAbortHandler)
		case errors.Is(err, cache.ErrSnapshotTooLarge):
			h.problem(w, kindTooLarge, err.Error(), nil)
		default:
			h.storeError(w, r, err)
		}
	}
}

// snapshotChunk is how many bytes of a snapshot's JSON are gathered
// before they are written.
const snapshotChunk = 64 << 10

// snapshotWriter writes a snapshot's JSON as the answer, a chunk at a
// time, each counted among the answers being written while it is
// (WithMaxAnswerMemory). The first chunk starts the answer, or answers
// 503 when it does not fit.
type snapshotWriter struct {
	h       *Handler
	w       http.ResponseWriter
	buf     []byte // what is not written yet
	started bool   // the answer's status is written
	failed  error  // a write failed, or the first was refused: nothing more goes out
}

// errRefused is the failure of a snapshot whose first chunk did not fit
// in the memory for answers.
var errRefused = errors.New("httpapi: no memory for the answer")

func (s *snapshotWriter) Write(p []byte) (int, error) {
	if s.failed != nil {
		return 0, s.failed
	}
	s.buf = append(s.buf, p...)
	if len(s.buf) >= snapshotChunk {
		if err := s.flush(); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// flush writes what was gathered, starting the answer first.
func (s *snapshotWriter) flush() error {
	n := int64(len(s.buf))
	if !s.started {
		if !s.h.budget.take(n, false) {
			s.failed = errRefused
			s.h.tooManyAnswers(s.w)
			return s.failed
		}
		hd := s.w.Header()
		hd["Content-Type"] = s.h.hdrJSON
		hd["Cache-Control"] = s.h.hdrCache
		s.w.WriteHeader(http.StatusOK)
		s.started = true
	} else {
		s.h.budget.take(n, true) // the rest of an answer under way
	}
	_, err := s.w.Write(s.buf)
	s.h.budget.give(n)
	s.buf = s.buf[:0]
	if err != nil {
		s.failed = err
	}
	return err
}

// finish writes the rest of a snapshot written whole: the whole of a
// small one, with its length.
func (s *snapshotWriter) finish() {
	if !s.started {
		s.h.writeRead(s.w, s.buf)
		return
	}
	_ = s.flush() // an error: the client went away; nothing to do
}
