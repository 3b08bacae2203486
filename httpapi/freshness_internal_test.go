package httpapi

import (
	"net/http"
	"testing"
)

// The request directives that ask for a fresh answer, parsed as RFC 9111
// lists them; anything malformed is skipped, never a panic.
func TestWantsFresh(t *testing.T) {
	for _, tc := range []struct {
		cc, pragma []string
		want       bool
	}{
		{[]string{"no-cache"}, nil, true},
		{[]string{"NO-CACHE"}, nil, true},
		{[]string{"max-age=0"}, nil, true},
		{[]string{"max-age=000"}, nil, true},
		{[]string{`max-age="0"`}, nil, true},
		{[]string{"max-age = 0"}, nil, true}, // white space around = tolerated
		{[]string{",,, no-cache ,"}, nil, true},
		{[]string{`x="a\"b,no-cache", no-cache`}, nil, true},
		{[]string{"max-age=1", "no-cache"}, nil, true}, // two fields, one list
		{nil, []string{"no-cache"}, true},
		{[]string{"max-age=1"}, nil, false},
		{[]string{"max-age="}, nil, false},
		{[]string{"max-age"}, nil, false},
		{[]string{"max-age=-0"}, nil, false},
		{[]string{`x="a\"b,no-cache"`}, nil, false},
		{[]string{`x="unterminated, no-cache`}, nil, false},
		{[]string{"no-cache-please"}, nil, false},
		{[]string{"no-cache junk"}, nil, false},
		{[]string{`"no-cache"`}, nil, false},
		{[]string{"=", `"`, "", ",", `\`}, nil, false},
		{[]string{""}, []string{"no-cache"}, false}, // Cache-Control present: Pragma is not read
		{nil, []string{"max-age=0"}, false},
		{nil, nil, false},
	} {
		hd := http.Header{}
		if tc.cc != nil {
			hd["Cache-Control"] = tc.cc
		}
		if tc.pragma != nil {
			hd["Pragma"] = tc.pragma
		}
		if got := wantsFresh(hd); got != tc.want {
			t.Errorf("Cache-Control %q, Pragma %q: %v, want %v", tc.cc, tc.pragma, got, tc.want)
		}
	}
}

// FuzzWantsFresh: no input panics.
func FuzzWantsFresh(f *testing.F) {
	for _, s := range []string{"no-cache", `a="b\"c", max-age=0`, `"`, `x=\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		wantsFresh(http.Header{"Cache-Control": {s}})
		wantsFresh(http.Header{"Pragma": {s}})
	})
}
