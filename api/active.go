package api

import (
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/promptkit/prompts"
)

// AppendActive appends the JSON of FromActive(a) to b, byte for byte as
// Marshal writes it, without reflection or allocation: the read of a
// prompt is every application's hot path, and a body the server does
// not keep encoded (one of over 32 KiB, or the first read after a
// change) is encoded on each read. BENCHMARKS.md ("The JSON of read 3")
// has the figures that keep it.
func AppendActive(b []byte, a prompts.ActivePrompt) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, a.ID)
	b = append(b, `,"project_id":`...)
	b = appendString(b, a.ProjectID)
	b = append(b, `,"key":`...)
	b = appendString(b, a.Key)
	b = append(b, `,"name":`...)
	b = appendString(b, a.Name)
	b = append(b, `,"description":`...)
	if a.Description == nil {
		b = append(b, "null"...)
	} else {
		b = appendString(b, *a.Description)
	}
	b = append(b, `,"latest_version_id":`...)
	if a.LatestVersionID == "" {
		b = append(b, "null"...)
	} else {
		b = appendString(b, a.LatestVersionID)
	}
	b = append(b, `,"active_version":`...)
	if v := a.ActiveVersion; v == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"id":`...)
		b = appendString(b, v.ID)
		b = append(b, `,"prompt_id":`...)
		b = appendString(b, v.PromptID)
		b = append(b, `,"version_number":`...)
		b = strconv.AppendInt(b, int64(v.VersionNumber), 10)
		b = append(b, `,"content":`...)
		b = appendString(b, v.Content)
		b = append(b, `,"metadata_":`...)
		if v.Metadata.IsNull() {
			b = append(b, "null"...)
		} else {
			b = append(b, v.Metadata...) // compact, as Stores keep it
		}
		b = append(b, `,"created_at":`...)
		b = appendTime(b, v.CreatedAt)
		b = append(b, '}')
	}
	if a.Split != nil {
		b = append(b, `,"split":`...)
		b = appendSplit(b, a.Split)
	}
	return append(b, '}')
}

// appendTime appends t in TimeLayout, quoted, in UTC. It writes the
// digits itself, as time.Time.AppendFormat would but without reading a
// layout, and leaves years outside 0 to 9999 to AppendFormat.
func appendTime(b []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		b = append(b, '"')
		b = t.AppendFormat(b, TimeLayout)
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

// appendString appends s as a JSON string, as Marshal writes it: it
// escapes what JSON requires (with \b, \f, \n, \r, \t where they exist),
// nothing else, and writes U+FFFD in place of invalid UTF-8.
func appendString(b []byte, s string) []byte {
	b, _ = appendStringValid(b, s)
	return b
}

// appendStringValid is appendString, and reports whether s was valid
// UTF-8 (no U+FFFD written in place of a byte).
func appendStringValid(b []byte, s string) ([]byte, bool) {
	valid := true
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
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
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
			b = append(b, "\uFFFD"...)
			i += size
			start = i
			valid = false
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"'), valid
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
