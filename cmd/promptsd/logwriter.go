package main

import (
	"bytes"
	"io"
	"sync"
	"time"
)

// logWriter buffers the log's lines and writes them out every flushEvery,
// when the buffer fills, at once for a line of level WARN or above, and
// at Close: the access log writes a line per request, and a write(2) per
// line would be the largest cost of a request (BENCHMARKS.md). What a
// crash of the process (SIGKILL, a fatal runtime error) can lose is the
// INFO lines of the last flushEvery; a clean stop, and every exit of run,
// loses none.
type logWriter struct {
	out        io.Writer
	flushEvery time.Duration

	mu     sync.Mutex
	buf    []byte
	err    error // the first write error, after which lines are dropped
	timer  *time.Timer
	closed bool
}

// logBufferSize is how much the writer holds before it writes at once.
const logBufferSize = 64 << 10

func newLogWriter(out io.Writer, flushEvery time.Duration) *logWriter {
	return &logWriter{out: out, flushEvery: flushEvery, buf: make([]byte, 0, logBufferSize)}
}

// Write appends one or more whole lines.
func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.appendLocked(p, urgent(p))
	return len(p), nil
}

// writeInfo appends lines of level INFO or below: Write, without looking
// for their level.
func (w *logWriter) writeInfo(p []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.appendLocked(p, false)
}

// urgent reports whether a line of slog's text format is of level WARN or
// above, and so written at once.
func urgent(line []byte) bool {
	// "time=… level=WARN msg=…": the level is the second field.
	head := line[:min(len(line), 64)]
	i := bytes.Index(head, []byte(" level="))
	if i < 0 {
		return false
	}
	l := head[i+len(" level="):]
	return bytes.HasPrefix(l, []byte("WARN")) || bytes.HasPrefix(l, []byte("ERROR"))
}

// appendLocked adds p to the buffer, writing out when now is set, when p
// does not fit, or when the buffer is past its size; else it arms the
// timer that writes it out within flushEvery.
func (w *logWriter) appendLocked(p []byte, now bool) {
	// p is copied, never handed on: a caller's line may live on its
	// stack.
	w.buf = append(w.buf, p...)
	if now || w.closed || w.flushEvery <= 0 || len(w.buf) >= logBufferSize {
		w.flushLocked()
		return
	}
	if w.timer == nil {
		w.timer = time.AfterFunc(w.flushEvery, w.Flush)
	} else if len(w.buf) == len(p) { // the first line since the last flush
		w.timer.Reset(w.flushEvery)
	}
}

// Flush writes out what the buffer holds.
func (w *logWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flushLocked()
}

func (w *logWriter) flushLocked() {
	if len(w.buf) == 0 {
		return
	}
	if w.err == nil {
		_, w.err = w.out.Write(w.buf)
	}
	w.buf = w.buf[:0]
	if cap(w.buf) > 4*logBufferSize {
		w.buf = make([]byte, 0, logBufferSize) // a burst of long lines is not kept
	}
}

// Close writes out what the buffer holds, and every later line at once.
func (w *logWriter) Close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flushLocked()
	w.closed = true
	if w.timer != nil {
		w.timer.Stop()
	}
}
