package dotpromptbench

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	gdp "github.com/google/dotprompt/go/dotprompt"
	"github.com/invopop/jsonschema"
	"go.yaml.in/yaml/v3"

	"github.com/promptkit/prompts"
)

// specDir is Dotprompt's specification suite as the main module vendors it.
const specDir = "../../internal/dotprompt/testdata/spec"

// specCase is one case of the suite: a template and the data to render it
// with, as both renderers take them.
type specCase struct {
	name    string // file/suite/desc
	source  string // the whole source, front matter included (theirs)
	body    string // the body as Dotprompt trims it (ours)
	input   map[string]any
	context map[string]any
	history []msg
	schemas map[string]*jsonschema.Schema // named schemas the front matter uses (theirs resolves them at render)
}

type specSuite struct {
	Name             string            `yaml:"name"`
	Template         string            `yaml:"template"`
	Data             specData          `yaml:"data"`
	Partials         map[string]string `yaml:"partials"`
	ResolverPartials map[string]string `yaml:"resolverPartials"`
	Schemas          map[string]any    `yaml:"schemas"`
	Tests            []struct {
		Desc    string         `yaml:"desc"`
		Data    specData       `yaml:"data"`
		Options map[string]any `yaml:"options"`
	} `yaml:"tests"`
}

type specData struct {
	Input    map[string]any `yaml:"input"`
	Context  map[string]any `yaml:"context"`
	Messages []msg          `yaml:"messages"`
}

// msg is a message in the shape both sides are compared in: a role and
// its text and media parts.
type msg struct {
	Role    string `yaml:"role" json:"role"`
	Content []part `yaml:"content" json:"content"`
}

type part struct {
	Text  string `yaml:"text,omitempty" json:"text,omitempty"`
	Media *media `yaml:"media,omitempty" json:"media,omitempty"`
}

type media struct {
	URL         string `yaml:"url" json:"url"`
	ContentType string `yaml:"contentType,omitempty" json:"contentType,omitempty"`
}

func (p part) String() string {
	if p.Media != nil {
		return fmt.Sprintf("media(%q %q)", p.Media.URL, p.Media.ContentType)
	}
	return fmt.Sprintf("%q", p.Text)
}

func formatMessages(ms []msg) string {
	var b strings.Builder
	for _, m := range ms {
		fmt.Fprintf(&b, "  %s: %v\n", m.Role, m.Content)
	}
	return b.String()
}

// frontMatter is Dotprompt's own pattern for a source's front matter.
var frontMatter = regexp.MustCompile(`^(?:(?:#[^\n]*|[ \t]*)\n)*---\s*(?:\r\n|\r|\n)([\s\S]*?)(?:\r\n|\r|\n)---\s*(?:\r\n|\r|\n)([\s\S]*)$`)

// loadSpec reads every case of the suite whose template uses no partial:
// the public API refuses partials for now (prompts.ParseTemplate), so the
// six cases of partials.yaml cannot be rendered through it.
func loadSpec(tb testing.TB) (cases []specCase, skipped int) {
	tb.Helper()
	files, _ := filepath.Glob(specDir + "/*.yaml")
	more, _ := filepath.Glob(specDir + "/helpers/*.yaml")
	files = append(files, more...)
	if len(files) == 0 {
		tb.Fatal("no specification files under " + specDir)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		var suites []specSuite
		if err := yaml.Unmarshal(raw, &suites); err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		rel, _ := filepath.Rel(specDir, f)
		for _, s := range suites {
			for _, tc := range s.Tests {
				if len(s.Partials)+len(s.ResolverPartials) > 0 {
					skipped++
					continue
				}
				c := specCase{name: rel + "/" + s.Name + "/" + tc.Desc, source: s.Template,
					input: map[string]any{}, context: map[string]any{}}
				var meta map[string]any
				if m := frontMatter.FindStringSubmatch(s.Template); m != nil {
					if err := yaml.Unmarshal([]byte(m[1]), &meta); err != nil {
						tb.Fatalf("%s: front matter: %v", c.name, err)
					}
				}
				c.body = bodyOf(s.Template)
				for name, sch := range s.Schemas {
					js, err := json.Marshal(sch)
					if err != nil {
						tb.Fatal(err)
					}
					var v jsonschema.Schema
					if err := json.Unmarshal(js, &v); err != nil {
						tb.Fatalf("%s: schema %s: %v", c.name, name, err)
					}
					if c.schemas == nil {
						c.schemas = map[string]*jsonschema.Schema{}
					}
					c.schemas[name] = &v
				}
				// input.default from the front matter and the case's
				// options: theirs applies the front matter's itself;
				// prompts leaves defaults to the caller (stores apply
				// them), so both get them merged here.
				for _, m := range []map[string]any{meta, tc.Options} {
					if in, ok := m["input"].(map[string]any); ok {
						if d, ok := in["default"].(map[string]any); ok {
							maps.Copy(c.input, d)
						}
					}
				}
				for _, d := range []specData{s.Data, tc.Data} {
					maps.Copy(c.input, d.Input)
					maps.Copy(c.context, d.Context)
					c.history = append(c.history, d.Messages...)
				}
				cases = append(cases, c)
			}
		}
	}
	return cases, skipped
}

// bodyOf is the body of a source as Dotprompt trims it before rendering.
func bodyOf(source string) string {
	if m := frontMatter.FindStringSubmatch(source); m != nil {
		return strings.TrimSpace(m[2])
	}
	return source
}

// ours is a template parsed once through the public API.
type ours struct {
	t  *prompts.Template
	in prompts.RenderInput
}

func newOurs(body string, input, ctxData map[string]any, history []msg) (*ours, error) {
	t, err := prompts.ParseTemplate(prompts.PromptVersion{Content: body, TemplateFormat: prompts.FormatDotprompt})
	if err != nil {
		return nil, err
	}
	o := &ours{t: t, in: prompts.RenderInput{Values: input, Context: ctxData, AllowUnused: true}}
	for _, m := range history {
		pm := prompts.Message{Role: m.Role}
		for _, p := range m.Content {
			pp := prompts.Part{Text: p.Text}
			if p.Media != nil {
				pp.Media = &prompts.Media{URL: p.Media.URL, ContentType: p.Media.ContentType}
			}
			pm.Content = append(pm.Content, pp)
		}
		o.in.History = append(o.in.History, pm)
	}
	return o, nil
}

func (o *ours) render(ctx context.Context) (prompts.Rendered, error) { return o.t.Render(ctx, o.in) }

func (o *ours) messages(ctx context.Context) ([]msg, error) {
	r, err := o.render(ctx)
	if err != nil {
		return nil, err
	}
	out := []msg{}
	for _, m := range r.Messages {
		om := msg{Role: m.Role, Content: []part{}}
		for _, p := range m.Content {
			op := part{Text: p.Text}
			if p.Media != nil {
				op = part{Media: &media{URL: p.Media.URL, ContentType: p.Media.ContentType}}
			}
			om.Content = append(om.Content, op)
		}
		out = append(out, om)
	}
	return out, nil
}

// theirs is a template compiled once by Google's port: one Dotprompt per
// template, since Compile keeps the template in the Dotprompt and the
// function it returns renders whatever the Dotprompt holds.
type theirs struct {
	fn   gdp.PromptFunction
	data gdp.DataArgument
}

func newTheirs(source string, input, ctxData map[string]any, history []msg, schemas map[string]*jsonschema.Schema) (*theirs, error) {
	fn, err := gdp.NewDotprompt(&gdp.DotpromptOptions{Schemas: schemas}).Compile(source, nil)
	if err != nil {
		return nil, err
	}
	th := &theirs{fn: fn, data: gdp.DataArgument{Input: input, Context: ctxData}}
	for _, m := range history {
		gm := gdp.Message{Role: gdp.Role(m.Role)}
		for _, p := range m.Content {
			if p.Media != nil {
				gm.Content = append(gm.Content, &gdp.MediaPart{Media: gdp.Media{URL: p.Media.URL, ContentType: p.Media.ContentType}})
			} else {
				gm.Content = append(gm.Content, &gdp.TextPart{Text: p.Text})
			}
		}
		th.data.Messages = append(th.data.Messages, gm)
	}
	return th, nil
}

func (th *theirs) render() (gdp.RenderedPrompt, error) { return th.fn(&th.data, nil) }

// messages renders and keeps text and media parts; pending parts (from
// {{section}}), which carry only metadata, are left out as prompts
// leaves them out.
func (th *theirs) messages() (out []msg, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	r, err := th.render()
	if err != nil {
		return nil, err
	}
	out = []msg{}
	for _, m := range r.Messages {
		om := msg{Role: string(m.Role), Content: []part{}}
		for _, p := range m.Content {
			switch p := p.(type) {
			case *gdp.TextPart:
				om.Content = append(om.Content, part{Text: p.Text})
			case *gdp.MediaPart:
				om.Content = append(om.Content, part{Media: &media{URL: p.Media.URL, ContentType: p.Media.ContentType}})
			}
		}
		out = append(out, om)
	}
	return out, nil
}
