package prompts

import (
	"time"
	"unicode/utf8"
)

// The wire encodings of SPEC part A are written by hand: they are on every
// read's hot path, their field sets are fixed, and encoding/json's
// reflection would cost several allocations a call.

// TimeFormat is the one timestamp format of the interface: RFC 3339 in UTC
// with exactly six fractional digits and a Z.
const TimeFormat = "2006-01-02T15:04:05.000000Z"

// AppendTime appends t in TimeFormat, quoted. It writes the digits
// itself, as time.Time.AppendFormat would but without reading a layout
// (a fifth of the time, on read 3's path), and leaves years outside 0 to
// 9999 to AppendFormat.
func AppendTime(b []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		b = append(b, '"')
		b = t.AppendFormat(b, TimeFormat)
		return append(b, '"')
	}
	hour, minute, sec := t.Clock()
	b = append(b, '"')
	b = appendDigits(b, year, 4)
	b = append(b, '-')
	b = appendDigits(b, int(month), 2)
	b = append(b, '-')
	b = appendDigits(b, day, 2)
	b = append(b, 'T')
	b = appendDigits(b, hour, 2)
	b = append(b, ':')
	b = appendDigits(b, minute, 2)
	b = append(b, ':')
	b = appendDigits(b, sec, 2)
	b = append(b, '.')
	b = appendDigits(b, t.Nanosecond()/1000, 6)
	return append(b, 'Z', '"')
}

// appendDigits appends the n last decimal digits of v (0 <= v), with
// leading zeros.
func appendDigits(b []byte, v, n int) []byte {
	b = append(b, "000000"[:n]...)
	for i := len(b) - 1; i >= len(b)-n; i-- {
		b[i] = byte('0' + v%10)
		v /= 10
	}
	return b
}

const hex = "0123456789abcdef"

// AppendString appends s as a JSON string. It escapes what JSON requires
// plus U+2028 and U+2029, and replaces invalid UTF-8 with U+FFFD, as
// encoding/json does (without its HTML escaping).
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if n := plainWords(s[i:]); n > 0 {
			i += n
			if i == len(s) {
				break
			}
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// plainWords returns the length of the longest prefix of s, in whole
// 8-byte words, of ASCII that a JSON string holds as is: no byte below
// 0x20, no quote, no backslash, none of 0x80 or above. It tests a word's
// bytes at once, so that the long plain runs of a prompt's text go at a
// word's pace rather than a byte's.
func plainWords(s string) int {
	const (
		ones = 0x0101010101010101
		high = 0x8080808080808080
	)
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := s[i : i+8]
		_ = w[7] // one bounds check for the eight
		x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		// (v - ones*n) &^ v has a high bit set if and only if a byte of v
		// is below n (for n up to 0x80): with n = 1, if a byte is zero.
		quote, backslash := x^(ones*'"'), x^(ones*'\\')
		special := ((x - ones*0x20) &^ x) | ((quote - ones) &^ quote) | ((backslash - ones) &^ backslash)
		if (special|x)&high != 0 {
			break
		}
	}
	return i
}

// appendNullString appends s, or null when s is nil.
func appendNullString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return AppendString(b, *s)
}

// appendID appends an id, or null when it is empty.
func appendID(b []byte, id string) []byte {
	if id == "" {
		return append(b, "null"...)
	}
	return AppendString(b, id)
}
