package dotprompt_test

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"sort"
	"testing"

	"github.com/matryer/is"
	"go.yaml.in/yaml/v3"

	"github.com/promptkit/prompts/internal/dotprompt"
)

// TestPicoschemaSpec compiles the input and output schemas of every case
// in the specification's picoschema.yaml and compares them with the
// expected JSON Schema (required lists compared as sets: a decoded map
// has no key order).
func TestPicoschemaSpec(t *testing.T) {
	is := is.New(t)
	raw, err := os.ReadFile("testdata/spec/picoschema.yaml")
	is.NoErr(err)
	var suites []struct {
		Name     string                    `yaml:"name"`
		Template string                    `yaml:"template"`
		Schemas  map[string]map[string]any `yaml:"schemas"`
		Tests    []struct {
			Expect map[string]any `yaml:"expect"`
		} `yaml:"tests"`
	}
	is.NoErr(yaml.Unmarshal(raw, &suites))
	n := 0
	for _, s := range suites {
		t.Run(s.Name, func(t *testing.T) {
			is := is.New(t)
			fm, _ := dotprompt.SplitSource(s.Template)
			var meta map[string]any
			is.NoErr(yaml.Unmarshal([]byte(fm), &meta))
			resolve := func(name string) (map[string]any, error) { return s.Schemas[name], nil }
			for _, tc := range s.Tests {
				for _, key := range []string{"input", "output"} {
					want, ok := tc.Expect[key].(map[string]any)
					if !ok || want["schema"] == nil {
						continue
					}
					src, _ := meta[key].(map[string]any)
					got, err := dotprompt.Picoschema(src["schema"], resolve)
					is.NoErr(err) // compiles
					g, w := normalize(t, got), normalize(t, want["schema"])
					if !reflect.DeepEqual(g, w) {
						gj, _ := json.Marshal(g)
						wj, _ := json.Marshal(w)
						t.Errorf("%s schema\n got: %s\nwant: %s", key, gj, wj)
					}
					n++
				}
			}
		})
	}
	is.True(n > 15) // the suite's schemas were compared
}

// normalize round-trips v through JSON and sorts every "required" list.
func normalize(t *testing.T, v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if r, ok := x["required"].([]any); ok {
				sort.Slice(r, func(i, j int) bool { return r[i].(string) < r[j].(string) })
			}
			for _, c := range x {
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(out)
	return out
}

func TestPicoschemaErrors(t *testing.T) {
	cases := map[string]any{
		"unknown type":           "frob",
		"bad parenthetical":      map[string]any{"a(list)": "string"},
		"nested unknown type":    map[string]any{"a": map[string]any{"b": "frob"}},
		"enum without a list":    map[string]any{"a(enum)": "x"},
		"neither string nor map": map[string]any{"a": 3},
	}
	for name, schema := range cases {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			_, err := dotprompt.Picoschema(schema, nil)
			is.True(errors.Is(err, dotprompt.ErrSchema))
		})
	}
	is := is.New(t)
	deep := any("string")
	for i := 0; i < 100; i++ {
		deep = map[string]any{"a": deep}
	}
	_, err := dotprompt.Picoschema(deep, nil)
	is.True(errors.Is(err, dotprompt.ErrSchema)) // nesting is bounded
}

func TestPicoschemaPassesJSONSchema(t *testing.T) {
	is := is.New(t)
	js := map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}}}
	got, err := dotprompt.Picoschema(js, nil)
	is.NoErr(err)
	is.Equal(got["properties"], js["properties"])
	got, err = dotprompt.Picoschema(map[string]any{"properties": map[string]any{}}, nil)
	is.NoErr(err)
	is.Equal(got["type"], "object") // properties without a type is an object
}
