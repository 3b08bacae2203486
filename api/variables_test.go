package api_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts/api"
)

// TestVariablesAsEncodingJSON checks that a render request's variables
// and context, read in one pass by DecodeRequest, are what encoding/json
// decodes with UseNumber (as UnmarshalJSON reads them).
func TestVariablesAsEncodingJSON(t *testing.T) {
	is := is.New(t)
	for _, obj := range []string{
		`{}`,
		`{"a":"b"}`,
		`{"s":"\u00e9\ud83d\ude00 \"q\" \\ \/ \n","n":1.50e+10,"i":-0,"big":123456789012345678901234567890,"t":true,"f":false,"z":null}`,
		`{"o":{"x":{"y":[1,"two",{"three":3},[],{}]}},"a":[null,[true,false]]}`,
		` { "spaced" : [ 1 , 2 ] } `,
	} {
		var want map[string]any
		dec := json.NewDecoder(bytes.NewReader([]byte(obj)))
		dec.UseNumber()
		is.NoErr(dec.Decode(&want)) // encoding/json reads it

		var req api.Render
		is.True(api.DecodeRequest([]byte(`{"variables":`+obj+`,"context":`+obj+`}`), &req) == nil) // read
		is.True(reflect.DeepEqual(map[string]any(req.Variables), want))                            // variables as encoding/json has them
		is.True(reflect.DeepEqual(map[string]any(req.Context), want))                              // context too

		var v api.Variables
		is.NoErr(v.UnmarshalJSON([]byte(obj)))              // the encoding/json path
		is.True(reflect.DeepEqual(map[string]any(v), want)) // agrees
	}
	var req api.Render
	is.True(api.DecodeRequest([]byte(`{"variables":null,"context":null}`), &req) == nil) // null is none
	is.True(req.Variables == nil && req.Context == nil)                                  // nil
	for _, bad := range []string{`[]`, `"x"`, `1`, `true`} {
		e := api.DecodeRequest([]byte(`{"variables":`+bad+`,"context":{}}`), &req)
		is.True(e != nil)                        // refused
		is.Equal(len(e.Fields), 1)               // one field
		is.Equal(e.Fields[0].Field, "variables") // named
		e = api.DecodeRequest([]byte(`{"context":`+bad+`}`), &req)
		is.True(e != nil && e.Fields[0].Field == "context") // context too
	}
}
