package main

import (
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"
)

// accessLog writes one line a request, in the format of slog's
// TextHandler (time, level, msg=request, then method, route, status,
// bytes, duration, request_id and the key's name), formatted by hand into
// a pooled buffer: the access log is on the path of every request, and
// slog's TextHandler costs about 3 µs a line (BENCHMARKS.md, "Operations
// that cost almost nothing": through slog the log took 20.7% of the
// server's CPU under load, formatted here 1.3%). Kept by hand for that
// reason; the format is slog's, so a reader of the logs sees none.
type accessLog struct {
	out   io.Writer    // nil: off
	lines *logWriter   // out, when it is one: written without a look at each line's level
	level slog.Leveler // the log's least level: lines are written while it is at most Info
	bufs  sync.Pool
	sec   atomic.Pointer[second] // the last second formatted
}

func newAccessLog(out io.Writer, level slog.Leveler, on bool) *accessLog {
	l := &accessLog{level: level}
	if on {
		l.out = out
		l.lines, _ = out.(*logWriter)
	}
	l.bufs.New = func() any { b := make([]byte, 0, 256); return &b }
	return l
}

// write writes the line of a request; route is the route's text as the
// line has it (logText).
func (l *accessLog) write(start time.Time, method, route string, status int, bytes int64, took time.Duration, id, key string) {
	if l.out == nil || l.level.Level() > slog.LevelInfo {
		return
	}
	if l.lines != nil {
		var buf [256]byte // on the stack: the log's buffer takes a copy
		l.lines.writeInfo(l.appendLine(buf[:0], start, method, route, status, bytes, took, id, key))
		return
	}
	bp := l.bufs.Get().(*[]byte)
	b := l.appendLine((*bp)[:0], start, method, route, status, bytes, took, id, key)
	_, _ = l.out.Write(b)
	*bp = b
	l.bufs.Put(bp)
}

// appendLine appends the line of a request to b.
func (l *accessLog) appendLine(b []byte, start time.Time, method, route string, status int, bytes int64, took time.Duration, id, key string) []byte {
	b = append(b, "time="...)
	b = l.appendTime(b, start.Add(took))
	b = append(b, " level=INFO msg=request method="...)
	// method, id and key are safe as they are (a fixed label, a valid
	// request id, a key name), and so is duration's text; the route's
	// was made safe once for all its requests (logText).
	b = append(b, method...)
	b = append(b, " route="...)
	b = append(b, route...)
	b = append(b, " status="...)
	if 100 <= status && status <= 999 { // every status a server sends: three digits
		b = append(b, byte('0'+status/100), byte('0'+status/10%10), byte('0'+status%10))
	} else {
		b = strconv.AppendInt(b, int64(status), 10)
	}
	b = append(b, " bytes="...)
	b = strconv.AppendInt(b, bytes, 10)
	b = append(b, " duration="...)
	b = appendDuration(b, took)
	b = append(b, " request_id="...)
	b = append(b, id...)
	if key != "" {
		b = append(b, " key="...)
		b = append(b, key...) // its name; never the secret
	}
	return append(b, '\n')
}

// appendDuration appends d as d.String() writes it, without making the
// string: 1.5ms, 782.1µs, 2.000000001s.
func appendDuration(b []byte, d time.Duration) []byte {
	if d < 0 || d >= time.Minute {
		return append(b, d.String()...) // rare: the general form
	}
	u := uint64(d)
	var unit string
	var digits int // fractional digits of the unit
	switch {
	case u == 0:
		return append(b, "0s"...)
	case u < uint64(time.Microsecond):
		return append(strconv.AppendUint(b, u, 10), "ns"...)
	case u < uint64(time.Millisecond):
		unit, digits = "µs", 3
	case u < uint64(time.Second):
		unit, digits = "ms", 6
	default:
		unit, digits = "s", 9
	}
	var frac [9]byte
	w := len(frac)
	printed := false
	for i := 0; i < digits; i++ {
		digit := u % 10
		printed = printed || digit != 0
		if printed {
			w--
			frac[w] = byte(digit) + '0'
		}
		u /= 10
	}
	b = strconv.AppendUint(b, u, 10)
	if printed {
		b = append(b, '.')
		b = append(b, frac[w:]...)
	}
	return append(b, unit...)
}

// second is the text of one second as slog writes a time, in two parts
// around the milliseconds.
type second struct {
	unix       int64
	head, zone string // "2006-01-02T15:04:05." and "Z07:00"
}

// appendTime appends t as slog's TextHandler does
// (2006-01-02T15:04:05.000Z07:00), formatting each second once.
func (l *accessLog) appendTime(b []byte, t time.Time) []byte {
	s := l.sec.Load()
	if s == nil || s.unix != t.Unix() {
		text := t.Truncate(time.Second).Format("2006-01-02T15:04:05.000Z07:00")
		s = &second{unix: t.Unix(), head: text[:len("2006-01-02T15:04:05.")], zone: text[len("2006-01-02T15:04:05.000"):]}
		l.sec.Store(s)
	}
	ms := t.Nanosecond() / 1e6
	b = append(b, s.head...)
	b = append(b, byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10))
	return append(b, s.zone...)
}

// appendValue appends s as slog's TextHandler writes a value: as it is,
// unless it is empty or holds a space, '"', '=', a control character or
// anything unprintable, which are quoted.
func appendValue(b []byte, s string) []byte {
	if s == "" {
		return append(b, `""`...)
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c <= ' ' || c == 0x7f || c == '"' || c == '=' {
				return strconv.AppendQuote(b, s)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return strconv.AppendQuote(b, s)
		}
		i += size
	}
	return append(b, s...)
}
