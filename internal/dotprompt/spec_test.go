package dotprompt_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/matryer/is"
	"go.yaml.in/yaml/v3"

	"github.com/promptkit/prompts/internal/dotprompt"
)

type specSuite struct {
	Name             string            `yaml:"name"`
	Template         string            `yaml:"template"`
	Data             specData          `yaml:"data"`
	Partials         map[string]string `yaml:"partials"`
	ResolverPartials map[string]string `yaml:"resolverPartials"`
	Tests            []struct {
		Desc    string         `yaml:"desc"`
		Data    specData       `yaml:"data"`
		Options map[string]any `yaml:"options"`
		Expect  struct {
			Messages []any `yaml:"messages"`
		} `yaml:"expect"`
	} `yaml:"tests"`
}

type specData struct {
	Input    map[string]any `yaml:"input"`
	Context  map[string]any `yaml:"context"`
	Messages []any          `yaml:"messages"`
}

// specSkips lists the specification cases this renderer does not pass,
// by "file/suite/desc", with the reason. Front matter fields other than
// input.default are not compared here: the renderer does not own them.
var specSkips = map[string]string{}

// TestSpec runs every case of Dotprompt's specification suite (vendored
// under testdata/spec) and compares the rendered messages.
func TestSpec(t *testing.T) {
	files, _ := filepath.Glob("testdata/spec/*.yaml")
	more, _ := filepath.Glob("testdata/spec/helpers/*.yaml")
	files = append(files, more...)
	if len(files) == 0 {
		t.Fatal("no spec files")
	}
	total, passed := 0, 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var suites []specSuite
		if err := yaml.Unmarshal(raw, &suites); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		rel, _ := filepath.Rel("testdata/spec", f)
		for _, s := range suites {
			for _, tc := range s.Tests {
				name := rel + "/" + s.Name + "/" + tc.Desc
				total++
				if why, ok := specSkips[name]; ok {
					t.Logf("not run: %s: %s", name, why)
					continue
				}
				ok := t.Run(rel+"/"+s.Name+"/"+tc.Desc, func(t *testing.T) {
					runSpecCase(t, s, tc.Data, tc.Options, tc.Expect.Messages)
				})
				if ok {
					passed++
				}
			}
		}
	}
	t.Logf("specification cases: %d, passed: %d, listed as not passing: %d", total, passed, len(specSkips))
}

func runSpecCase(t *testing.T, s specSuite, data specData, options map[string]any, want []any) {
	is := is.New(t)
	fm, body := dotprompt.SplitSource(s.Template)
	input := map[string]any{}
	// input.default, from the front matter or the case's options.
	var meta map[string]any
	if fm != "" {
		is.NoErr(yaml.Unmarshal([]byte(fm), &meta))
	}
	for _, m := range []map[string]any{meta, options} {
		if in, ok := m["input"].(map[string]any); ok {
			if d, ok := in["default"].(map[string]any); ok {
				for k, v := range d {
					input[k] = v
				}
			}
		}
	}
	for _, d := range []specData{s.Data, data} {
		for k, v := range d.Input {
			input[k] = v
		}
	}
	ctxData := map[string]any{}
	for _, d := range []specData{s.Data, data} {
		for k, v := range d.Context {
			ctxData[k] = v
		}
	}
	var history []dotprompt.Message
	hist := append(append([]any(nil), s.Data.Messages...), data.Messages...)
	if len(hist) > 0 {
		b, err := json.Marshal(hist)
		is.NoErr(err)
		is.NoErr(json.Unmarshal(b, &history))
	}
	partials := map[string]*dotprompt.Template{}
	for _, m := range []map[string]string{s.Partials, s.ResolverPartials} {
		for name, src := range m {
			p, err := dotprompt.Parse(src)
			is.NoErr(err) // partial parses
			partials[name] = p
		}
	}
	tpl, err := dotprompt.Parse(body)
	is.NoErr(err) // template parses
	res, err := tpl.Render(context.Background(), dotprompt.Data{Input: input, Context: ctxData, History: history},
		dotprompt.Options{Partials: dotprompt.PartialMap(partials)})
	is.NoErr(err) // renders
	gotJSON, err := json.Marshal(res.Messages)
	is.NoErr(err)
	var got any
	is.NoErr(json.Unmarshal(gotJSON, &got))
	wantJSON, err := json.Marshal(want)
	is.NoErr(err)
	var wantV any
	is.NoErr(json.Unmarshal(wantJSON, &wantV))
	if !reflect.DeepEqual(got, wantV) {
		t.Errorf("messages\n got: %s\nwant: %s", gotJSON, wantJSON)
	}
}
