package main

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/oklog/ulid/v2"

	"github.com/promptkit/prompts/internal/testbin"
)

// Lines wait in the buffer until the flush interval, a WARN or ERROR line
// (written at once, after what came before), or Close; none is lost.
func TestLogWriterBuffersAndFlushes(t *testing.T) {
	is := is.New(t)
	var out testbin.Buffer
	w := newLogWriter(&out, time.Hour) // only the other causes flush
	log := slog.New(slog.NewTextHandler(w, nil))
	log.Info("one")
	is.Equal(out.String(), "") // held
	log.Warn("two")
	is.Equal(strings.Count(out.String(), "\n"), 2) // both, in order
	is.True(strings.Index(out.String(), "msg=one") < strings.Index(out.String(), "msg=two"))
	log.Info("three")
	w.Close()
	is.True(strings.Contains(out.String(), "msg=three")) // Close writes it out
	log.Info("four")
	is.True(strings.Contains(out.String(), "msg=four")) // after Close, at once

	out = testbin.Buffer{}
	w = newLogWriter(&out, 5*time.Millisecond)
	defer w.Close()
	w.Write([]byte("time=x level=INFO msg=five\n"))
	waitFor(t, "the timer writes the line out", func() bool { return strings.Contains(out.String(), "msg=five") })

	// A buffer past its size is written out at once.
	out = testbin.Buffer{}
	w2 := newLogWriter(&out, time.Hour)
	line := []byte("time=x level=INFO msg=" + strings.Repeat("x", 1000) + "\n")
	for range logBufferSize/len(line) + 1 {
		w2.Write(line)
	}
	is.True(out.String() != "")
	w2.Close()
}

// The access log's hand-made lines read as slog's TextHandler writes
// them, values quoted where it quotes them.
func TestAccessLogLineIsSlogs(t *testing.T) {
	is := is.New(t)
	for _, v := range []string{"GET", "/v1/integration/prompts/{prompt_id}", "782.1µs", "", "a b", `a"b`, "a=b", "a\\b", "\x01", "é", "\u00a0", "\xff"} {
		var want bytes.Buffer
		slog.New(slog.NewTextHandler(&want, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == "time" || a.Key == "level" || a.Key == "msg" {
				return slog.Attr{}
			}
			return a
		}})).Info("", "v", v)
		got := "v=" + string(appendValue(nil, v)) + "\n"
		is.Equal(got, want.String()) // the same as slog
	}

	var out bytes.Buffer
	l := newAccessLog(&out, slog.LevelInfo, true)
	start := time.Date(2026, 11, 23, 21, 0, 0, 0, time.UTC)
	l.write(start, "GET", "/v1/integration/projects", 200, 1150, 1500*time.Microsecond, "01KAB", "default")
	is.Equal(out.String(), "time=2026-11-23T21:00:00.001Z level=INFO msg=request method=GET route=/v1/integration/projects status=200 bytes=1150 duration=1.5ms request_id=01KAB key=default\n")
	out.Reset()
	l.write(start, "GET", "/livez", 200, 3, time.Millisecond, "01KAB", "")
	is.True(!strings.Contains(out.String(), "key=")) // no key, no key field

	// The time as slog writes it, in any zone, second after second.
	zone := time.FixedZone("", 5*3600+30*60)
	for _, at := range []time.Time{start, start.Add(999 * time.Millisecond), start.Add(1001 * time.Millisecond), start.In(zone), start.Add(7 * time.Millisecond).In(zone)} {
		is.Equal(string(l.appendTime(nil, at)), at.Format("2006-01-02T15:04:05.000Z07:00"))
	}

	// Off, or a level above info: nothing.
	out.Reset()
	newAccessLog(&out, slog.LevelInfo, false).write(start, "GET", "/", 200, 0, 0, "x", "")
	newAccessLog(&out, slog.LevelWarn, true).write(start, "GET", "/", 200, 0, 0, "x", "")
	is.Equal(out.String(), "")
}

// Request ids are ULIDs of the request's time, all different.
func TestRequestIDs(t *testing.T) {
	is := is.New(t)
	var g requestIDs
	now := time.Now()
	seen := map[string]bool{}
	texts := make([][ulid.EncodedSize]byte, 1000)
	for i := range texts {
		at := now.Add(time.Duration(i/100) * time.Millisecond) // 100 ids a millisecond
		id := g.next(&texts[i], at, uint64(i+1))
		u, err := ulid.ParseStrict(id)
		is.NoErr(err)
		is.Equal(u.Time(), ulid.Timestamp(at))
		// The random part: the process's prefix, then the counter.
		is.Equal(u.Entropy()[:4], g.prefix[:])
		is.Equal(u.Entropy()[4:], []byte{0, 0, 0, 0, byte((i + 1) >> 8), byte(i + 1)})
		is.True(!seen[id])
		is.True(validRequestID(id))
		seen[id] = true
	}
}

// Every bit of the random prefix is in the id, whatever the prefix drawn.
func TestRequestIDPrefixes(t *testing.T) {
	is := is.New(t)
	var text [ulid.EncodedSize]byte
	for range 64 {
		var g requestIDs
		u, err := ulid.ParseStrict(g.next(&text, time.Now(), 1))
		is.NoErr(err)
		is.Equal(u.Entropy()[:4], g.prefix[:])
	}
}

// appendDuration writes what Duration.String does.
func TestAppendDuration(t *testing.T) {
	ds := []time.Duration{0, 1, 999, time.Microsecond, 1500 * time.Nanosecond, 782100 * time.Nanosecond, time.Millisecond,
		1500 * time.Microsecond, 1000001 * time.Nanosecond, time.Second, 2*time.Second + 1, 59*time.Second + 999999999, time.Minute, 90 * time.Minute, -time.Second}
	for i := 0; i < 10000; i++ {
		ds = append(ds, time.Duration(i)*time.Duration(i)*7919+time.Duration(i))
	}
	for _, d := range ds {
		if got := string(appendDuration(nil, d)); got != d.String() {
			t.Fatalf("appendDuration(%d) = %q, want %q", d, got, d.String())
		}
	}
}
