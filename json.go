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

// AppendTime appends t in TimeFormat, quoted.
func AppendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, TimeFormat)
	return append(b, '"')
}

const hex = "0123456789abcdef"

// AppendString appends s as a JSON string. It escapes what JSON requires
// plus U+2028 and U+2029, and replaces invalid UTF-8 with U+FFFD, as
// encoding/json does (without its HTML escaping).
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
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
