package api

import (
	"reflect"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/matryer/is"
)

// quickBodies are render bodies as applications send them, which
// decodeQuick reads itself (rather than leave them to Unmarshal).
var quickBodies = []string{
	`{"environment":"production","variables":{"company":"Acme","handoff_url":"https://acme.example/help","agent_name":"Sam","customer_name":"Ada"}}`,
	`{}`,
	` { "environment" : null , "variables" : { } } `,
	"{\n\t\"version_number\": 12,\r\n\"variables\": {\"a\": \"x\"}, \"allow_unused\": true}",
	`{"version_number":99999999999999999999999,"variables":{}}`,
	`{"variables":{"s":"\u00e9\ud83d\ude00 \"q\" \\ \/ \n\t","é":"ü","n":1.50e+10,"i":-0,"e":2E-3,"big":123456789012345678901234567890,"t":true,"f":false,"z":null}}`,
	`{"variables":{"o":{"x":{"y":[1,"two",{"three":3},[],{}]}},"a":[null,[true,false]]},"context":{"state":{"n":1}},"allow_unused":false}`,
	`{"variables":null,"context":null,"history":null}`,
	`{"variables":{},"history":[{"role":"user","content":[{"text":"hi"},{"media":{"url":"https://x/y.png","contentType":"image/png"}}]}]}`,
	`{"environm\u0065nt":"staging","variables":{"a\u0062":"c"}}`,
	`{"environment":"","variables":{"":""}}`,
	`{"environment":"production","subject":"user-42","variables":{"a":"b"}}`,
	`{"subject":"","version_number":3,"variables":{}}`,
	`{"subject":null,"variables":{}}`,
}

// unquickBodies are bodies decodeQuick leaves to Unmarshal: some
// Unmarshal refuses (and says why), some it reads (members decodeQuick
// does not know, values of other shapes).
var unquickBodies = []string{
	``, ` `, `null`, `[]`, `"x"`, `{`, `{"variables":{}`, `{"variables":{}}x`, `{"variables":{}} {}`,
	`{"variables":{},}`, `{,}`, `{"variables" {}}`, `{"variables":{"a":1,}}`, `{"variables":{"a":[1,]}}`,
	`{"variables":{"a":"b","a":"c"}}`, `{"variables":{"a":"b","\u0061":"c"}}`, `{"variables":{},"variables":{}}`,
	`{"environment":"a","environm\u0065nt":"b"}`, `{"Variables":{}}`, `{"variables_":{}}`, `{"subject":1}`, `{"subject":"a","subject":"b"}`, `{"tenant":"u"}`,
	`{"environment":1}`, `{"environment":["a"]}`, `{"version_number":-1}`, `{"version_number":1.5}`,
	`{"version_number":1e3}`, `{"version_number":null}`, `{"version_number":"1"}`, `{"version_number":01}`,
	`{"allow_unused":null}`, `{"allow_unused":1}`, `{"allow_unused":tru}`, `{"allow_unused":truex}`,
	`{"variables":[]}`, `{"variables":"x"}`, `{"variables":1}`, `{"context":true}`,
	`{"variables":{"a":"\ud800"}}`, `{"variables":{"a":"\ud800\u0041"}}`, `{"variables":{"a":"\x"}}`, `{"variables":{"a":"\u12"}}`,
	"{\"variables\":{\"a\":\"\xff\"}}", "{\"variables\":{\"a\":\"\xed\xa0\x80\"}}", "{\"variables\":{\"a\":\"tab\there\"}}",
	"\xef\xbb\xbf{}", `{"variables":{"n":-}}`, `{"variables":{"n":1.}}`, `{"variables":{"n":.5}}`, `{"variables":{"n":1e}}`,
	`{"variables":{"n":+1}}`, `{"variables":{"n":NaN}}`, `{"variables":{"n":0x10}}`, `{"variables":{"a":"b"`,
	`{"history":[{"role":"user","content":[{"text":1}]}]}`, `{"history":{"role":"user"}}`,
	`{"variables":` + strings.Repeat(`[`, quickDepth+1) + strings.Repeat(`]`, quickDepth+1) + `}`,
}

// checkQuick checks decodeQuick against Unmarshal on body: what it reads,
// Unmarshal reads the same; what it leaves, it leaves as the zero value.
func checkQuick(t *testing.T, body string) bool {
	t.Helper()
	var quick, want Render
	ok := quick.decodeQuick([]byte(body))
	err := json.Unmarshal([]byte(body), &want, json.RejectUnknownMembers(true))
	switch {
	case !ok && !reflect.DeepEqual(quick, Render{}):
		t.Fatalf("decodeQuick(%q) left %#v, not the zero value", body, quick)
	case ok && err != nil:
		t.Fatalf("decodeQuick(%q) read what Unmarshal refuses: %v", body, err)
	case ok && !reflect.DeepEqual(quick, want):
		t.Fatalf("decodeQuick(%q) = %#v, Unmarshal reads %#v", body, quick, want)
	}
	return ok
}

// decodeQuick reads the bodies applications send, exactly as Unmarshal
// does, and leaves any other to Unmarshal.
func TestDecodeQuick(t *testing.T) {
	is := is.New(t)
	for _, body := range quickBodies {
		is.True(checkQuick(t, body)) // read by decodeQuick
	}
	for _, body := range unquickBodies {
		is.True(!checkQuick(t, body)) // left to Unmarshal
	}
}

// FuzzDecodeQuick: whatever decodeQuick reads, Unmarshal reads the same.
func FuzzDecodeQuick(f *testing.F) {
	for _, body := range append(quickBodies, unquickBodies...) {
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, body string) { checkQuick(t, body) })
}
