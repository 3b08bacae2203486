package api_test

import (
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
)

// checkActive checks that AppendActive writes what Marshal writes of
// FromActive, byte for byte, after a prefix it keeps.
func checkActive(t *testing.T, a prompts.ActivePrompt) {
	t.Helper()
	want, err := api.Marshal(api.FromActive(a))
	if err != nil {
		t.Fatal(err)
	}
	got := api.AppendActive([]byte("x"), a)
	if string(got) != "x"+string(want) {
		t.Fatalf("AppendActive:\n%s\nMarshal:\n%s", got[1:], want)
	}
}

var stringCases = []string{
	"",
	"plain ASCII text that is longer than eight bytes",
	`quote " backslash \ slash /`,
	"control \x00\x01\x1f\x7f tab\t newline\n return\r backspace \b form feed \f",
	"<html> & 'single'",
	"héllo wörld, 日本語, emoji 😀",
	"line\u2028separator\u2029paragraph",
	"invalid \xff\xfe utf-8 \xc3",
	"truncated rune at the end \xe2\x82",
	strings.Repeat("abcdefgh", 20) + `"` + strings.Repeat("x", 7),
	"1234567\"", "12345678\\", "\n2345678", "1234567\x80",
}

func TestAppendActiveAsMarshal(t *testing.T) {
	checkActive(t, sample())
	a := sample()
	a.ActiveVersion, a.Description, a.LatestVersionID = nil, nil, ""
	checkActive(t, a) // the nulls
	for _, s := range stringCases {
		// Every alignment of the special characters to 8-byte words.
		for pad := range 9 {
			a := sample()
			s := strings.Repeat("p", pad) + s
			a.Name, *a.Description, a.ActiveVersion.Content = s, s, s
			checkActive(t, a)
		}
	}
	for _, tm := range []time.Time{
		{},
		time.Date(2026, 1, 2, 3, 4, 5, 100000000, time.UTC),
		time.Date(1999, 12, 31, 23, 59, 59, 999999999, time.FixedZone("east", 5*3600+1800)),
		time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC),
		time.Date(2026, 11, 22, 0, 5, 0, 1000, time.Local),
	} {
		a := sample()
		a.ActiveVersion.CreatedAt = tm
		checkActive(t, a)
	}
	a = sample()
	a.ActiveVersion.Metadata = `{"a":"\u00e9<>&","n":1.50e+10,"deep":[{"x":null}]}`
	checkActive(t, a) // metadata as stored
}

func TestAppendActiveAllocates(t *testing.T) {
	is := is.New(t)
	a := sample()
	buf := make([]byte, 0, 4096)
	is.Equal(testing.AllocsPerRun(100, func() { buf = api.AppendActive(buf[:0], a) }), 0.0) // no allocation
}

func FuzzAppendActive(f *testing.F) {
	for _, s := range stringCases {
		f.Add(s, int64(1763900000123456789))
	}
	f.Fuzz(func(t *testing.T, s string, ns int64) {
		a := sample()
		a.Name, *a.Description, a.ActiveVersion.Content = s, s, s
		a.ActiveVersion.CreatedAt = time.Unix(0, ns)
		if y := a.ActiveVersion.CreatedAt.UTC().Year(); y < 0 || y > 9999 {
			return // outside RFC 3339
		}
		checkActive(t, a)
	})
}
