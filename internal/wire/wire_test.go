package wire_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/internal/wire"
)

// checkString checks that AppendString(prefix, s) is prefix and then a
// JSON string that decodes to what encoding/json's encoding of s decodes
// to (s with invalid UTF-8 replaced by U+FFFD), and that it escapes
// exactly the characters encoding/json escapes, HTML's aside. (The two
// escape \b and \f differently: \u0008 here, \b there, alike for a
// decoder.)
func checkString(t *testing.T, s string) {
	t.Helper()
	is := is.New(t)
	got := wire.AppendString([]byte("x"), s)
	is.Equal(got[0], byte('x')) // the prefix kept
	got = got[1:]
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	is.NoErr(enc.Encode(s)) // encoding/json
	want := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	var gotS, wantS string
	is.NoErr(json.Unmarshal(got, &gotS)) // valid JSON
	is.NoErr(json.Unmarshal(want, &wantS))
	is.Equal(gotS, wantS)                                                     // the same string as encoding/json's
	is.Equal(bytes.Count(got, []byte("\\")), bytes.Count(want, []byte("\\"))) // the same characters escaped
}

var stringCases = []string{
	"",
	"plain ASCII text that is longer than eight bytes",
	`quote " backslash \ slash /`,
	"control \x00\x01\x1f\x7f tab\t newline\n return\r",
	"<html> & 'single'",
	"héllo wörld, 日本語, emoji 😀",
	"line\u2028separator\u2029paragraph",
	"invalid \xff\xfe utf-8 \xc3",
	"truncated rune at the end \xe2\x82",
	strings.Repeat("abcdefgh", 20) + `"` + strings.Repeat("x", 7),
	"1234567\"", "12345678\\", "\n2345678", "1234567\x80",
	"backspace \b form feed \f",
}

func TestAppendStringAsEncodingJSON(t *testing.T) {
	for _, s := range stringCases {
		// Every alignment of the special characters to 8-byte words.
		for pad := range 9 {
			checkString(t, strings.Repeat("p", pad)+s)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range stringCases {
		f.Add(s)
	}
	f.Fuzz(checkString)
}

// benchActive is read 3's value in the load harness: a 1.1 KB body.
func benchActive() prompts.ActivePrompt {
	now := time.Date(2026, 11, 21, 22, 19, 26, 123456000, time.UTC)
	desc := "The first message of the support assistant."
	return prompts.ActivePrompt{
		Prompt: prompts.Prompt{
			ID: "01KAKM6N8V5X3ZJ0W2Q9R7T4YB", ProjectID: "01KAKM6N8V0000000000000000", Key: "support/greeting",
			Name: "Support greeting", Description: &desc, LatestVersionID: "01KAKM6N8W5X3ZJ0W2Q9R7T4YC", CreatedAt: now,
		},
		Environment: prompts.Production,
		ActiveVersion: &prompts.PromptVersion{
			ID: "01KAKM6N8W5X3ZJ0W2Q9R7T4YC", PromptID: "01KAKM6N8V5X3ZJ0W2Q9R7T4YB", VersionNumber: 1,
			Content:  strings.Repeat("You are the support assistant of {{company}}. Greet them warmly. ", 11),
			Metadata: `{"model":"gpt-5","temperature":0.2,"max_tokens":512,"tags":["support","greeting"]}`, CreatedAt: now,
		},
	}
}

// BenchmarkAppendActive encodes read 3's body.
func BenchmarkAppendActive(b *testing.B) {
	a := benchActive()
	buf := make([]byte, 0, 2048)
	b.ReportAllocs()
	for b.Loop() {
		buf = wire.AppendActive(buf[:0], a)
	}
	b.SetBytes(int64(len(buf)))
}

func TestAppendTimeAsAppendFormat(t *testing.T) {
	times := []time.Time{
		{},
		time.Date(2026, 11, 21, 22, 19, 26, 123456789, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 100000000, time.UTC),
		time.Date(1999, 12, 31, 23, 59, 59, 999999999, time.FixedZone("east", 5*3600+1800)),
		time.Date(2000, 2, 29, 0, 0, 0, 0, time.FixedZone("west", -7*3600)),
		time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 11, 22, 0, 5, 0, 1000, time.Local),
	}
	for i := range 1000 {
		// Spread over four centuries, at every microsecond digit.
		times = append(times, time.Unix(int64(i)*12_622_780_811, int64(i)*999_983%1e9))
	}
	is := is.New(t)
	for _, tm := range times {
		want := `"` + tm.UTC().Format(wire.TimeFormat) + `"`
		is.Equal(string(wire.AppendTime([]byte("x"), tm)), "x"+want) // as Format
	}
}

func BenchmarkAppendTime(b *testing.B) {
	tm := time.Date(2026, 11, 21, 22, 19, 26, 123456000, time.UTC)
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		buf = wire.AppendTime(buf[:0], tm)
	}
}

// The entity tag names the prompt, the environment and the revision, and
// so differs whenever one of them does.
func TestAppendETag(t *testing.T) {
	is := is.New(t)
	a := benchActive()
	a.Revision = 1763900000123456
	tag := string(wire.AppendETag(nil, a))
	is.Equal(tag, `"1-01KAKM6N8V5X3ZJ0W2Q9R7T4YB-production-1763900000123456"`)
	tags := map[string]bool{tag: true}
	b := a
	b.Revision++
	c := a
	c.Environment = prompts.Staging
	d := a
	d.ID = "01KAKM6N8V5X3ZJ0W2Q9R7T4YD"
	for _, x := range []prompts.ActivePrompt{b, c, d} {
		tg := string(wire.AppendETag(nil, x))
		is.True(!tags[tg]) // another prompt, environment or revision, another tag
		tags[tg] = true
	}
}

// The response shapes hold exactly their fields: read 3 no created_at of
// the prompt, a version no change_summary unless in detail.
func TestShapes(t *testing.T) {
	is := is.New(t)
	a := benchActive()
	keys := func(b []byte) []string {
		var m map[string]json.RawMessage
		is.NoErr(json.Unmarshal(b, &m)) // valid JSON
		var out []string
		for k := range m {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	is.Equal(keys(wire.AppendActive(nil, a)), []string{"active_version", "description", "id", "key", "latest_version_id", "name", "project_id"})
	is.Equal(keys(wire.AppendPrompt(nil, a.Prompt)), []string{"created_at", "description", "id", "key", "latest_version_id", "name", "project_id"})
	is.Equal(keys(wire.AppendVersion(nil, *a.ActiveVersion)), []string{"content", "created_at", "id", "metadata_", "prompt_id", "version_number"})
	is.Equal(keys(wire.AppendVersionDetail(nil, *a.ActiveVersion)), []string{"change_summary", "content", "created_at", "id", "metadata_", "prompt_id", "variables", "version_number"})
	is.Equal(keys(wire.AppendProject(nil, prompts.Project{})), []string{"created_at", "description", "id", "is_private", "name", "slug"})
	a.ActiveVersion = nil
	a.Description = nil
	a.LatestVersionID = ""
	is.Equal(string(wire.AppendActive(nil, a)), `{"id":"01KAKM6N8V5X3ZJ0W2Q9R7T4YB","project_id":"01KAKM6N8V0000000000000000","key":"support/greeting","name":"Support greeting","description":null,"latest_version_id":null,"active_version":null}`)
}

// ParseETag reads back what AppendETag writes, and nothing else.
func TestParseETag(t *testing.T) {
	is := is.New(t)
	a := benchActive()
	a.Revision = 1763900000123456
	id, env, rev, ok := wire.ParseETag(string(wire.AppendETag(nil, a)))
	is.True(ok)
	is.Equal(id, a.ID)
	is.Equal(env, a.Environment)
	is.Equal(rev, a.Revision)
	for _, bad := range []string{
		``, `"`, `""`, `*`,
		`1-01KAKM6N8V5X3ZJ0W2Q9R7T4YB-production-1763900000123456`,     // unquoted
		`W/"1-01KAKM6N8V5X3ZJ0W2Q9R7T4YB-production-1763900000123456"`, // weak
		`"2-01KAKM6N8V5X3ZJ0W2Q9R7T4YB-production-1763900000123456"`,   // another form
		`"1-01KAKM6N8V5X3ZJ0W2Q9R7T4Y-production-1763900000123456"`,    // not an id
		`"1-01KAKM6N8V5X3ZJ0W2Q9R7T4YB-dev-1763900000123456"`,          // not an environment
		`"1-01KAKM6N8V5X3ZJ0W2Q9R7T4YB-production-0"`,                  // no revision
		`"1-01KAKM6N8V5X3ZJ0W2Q9R7T4YB-production--1"`,
		`"1-01KAKM6N8V5X3ZJ0W2Q9R7T4YB-production-1x"`,
		`"1-01KAKM6N8V5X3ZJ0W2Q9R7T4YB-production-99999999999999999999"`,
		`"0123456789abcdef"`, // the tags of an older release
	} {
		_, _, _, ok := wire.ParseETag(bad)
		is.True(!ok) // not a tag of this form: bad
	}
}

func BenchmarkAppendActiveLarge(b *testing.B) {
	a := benchActive()
	a.ActiveVersion.Content = strings.Repeat(a.ActiveVersion.Content, 50)
	buf := make([]byte, 0, 64<<10)
	b.ReportAllocs()
	for b.Loop() {
		buf = wire.AppendActive(buf[:0], a)
	}
	b.SetBytes(int64(len(buf)))
}
