package prompts

import (
	"context"
	"errors"
	"slices"
	"strconv"

	"github.com/promptkit/prompts/internal/dotprompt"
)

// Message is one chat message of a render, in Dotprompt's shape: a role
// (system, user, model or tool) and its parts.
type Message struct {
	Role    string
	Content []Part
}

// Part is a text part, or a media part when Media is not nil.
type Part struct {
	Text  string
	Media *Media
}

// Media is a media part's reference.
type Media struct {
	URL         string
	ContentType string // "" when not given
}

// The roles of messages.
var Roles = []string{"system", "user", "model", "tool"}

// RenderInput is what Template.Render renders a version with.
type RenderInput struct {
	// Values are the variables' values: for a plain version strings
	// only; for a dotprompt version any value as encoding/json decodes
	// JSON (json.Number for numbers keeps their digits).
	Values map[string]any
	// Context is Dotprompt's @ data (@state, @auth, …); dotprompt only.
	Context map[string]any
	// History is what {{history}} inserts; dotprompt only (without
	// {{history}} it goes before the last user message).
	History []Message
	// AllowUnused ignores values for names the version does not read,
	// rather than refuse them.
	AllowUnused bool

	partials *partialSet // what a Renderer resolved (partials.go)
}

// Rendered is a rendered version: its messages, and the text parts of
// all of them joined; for a dotprompt version, the model, config and
// output of its front matter (see VersionSignature): Model "" when
// absent, Config and Output the JSON text of the object, "" when absent.
type Rendered struct {
	Messages []Message
	Text     string
	Model    string
	Config   string
	Output   string
}

// Template is a version's content parsed once, to render many times. It
// is immutable and safe for concurrent use.
type Template struct {
	format TemplateFormat
	v      PromptVersion       // plain: rendered by PromptVersion.Render
	dp     *dotprompt.Template // dotprompt
	fm     *frontMatter        // dotprompt: its metadata_
	vars   []string
}

// ParseTemplate parses v's content in its format (a version without one
// is plain), and a dotprompt version's front matter (its metadata_),
// compiling its input schema. A dotprompt template with front matter
// (a metadata_) renders without its surrounding white space, as Dotprompt
// renders the body of a .prompt file; without, and a plain one, every
// byte, as Dotprompt renders a source without front matter. A dotprompt template that does
// not parse, or front matter of the wrong shape, is an invalid-input
// error for "content" or the key, as when it is stored (see
// VersionSignature).
func ParseTemplate(v PromptVersion) (*Template, error) {
	t := &Template{format: v.TemplateFormat.Or(FormatPlain), v: v}
	if t.format != FormatDotprompt {
		if t.v.Variables == nil {
			t.v.Variables = Variables(v.Content)
		}
		return t, nil
	}
	// Dotprompt trims the body of a source with front matter before it
	// renders it, and renders a source without front matter as it is: the
	// stored content keeps every byte, and renders as Dotprompt (and
	// Genkit) render the file it came from.
	body := v.Content
	if !v.Metadata.IsNull() {
		body = dotprompt.Body(body)
	}
	dp, err := parseTemplate(body)
	if err != nil {
		return nil, err
	}
	var fe fieldErrors
	t.dp, t.vars, t.fm = dp, dp.Variables(), readFrontMatter(v.Metadata, &fe)
	if len(fe) > 0 {
		return nil, fe.err()
	}
	if t.fm.schema != nil {
		t.vars = t.fm.props
	}
	return t, nil
}

// Format returns the template's format.
func (t *Template) Format() TemplateFormat { return t.format }

// RenderMessages parses v (see ParseTemplate) and renders it (see
// Template.Render). To render a version more than once, parse it once.
func (v PromptVersion) RenderMessages(ctx context.Context, in RenderInput) (Rendered, error) {
	t, err := ParseTemplate(v)
	if err != nil {
		return Rendered{}, err
	}
	return t.Render(ctx, in)
}

// Render renders the template with in.
//
// A plain version renders as PromptVersion.Render does (strictly: every
// variable needs a value, and each value must be a string), to one user
// message; Context and History do not apply to it.
//
// A dotprompt version renders as Dotprompt does, with the values of
// in.Values over its input.default: a variable without a value renders
// empty; role markers split the output into messages (output before any
// marker is a user message); {{history}} inserts in.History; {{media}} is
// a media part. Without an input schema, a value for a name the template
// never reads is an error unless in.AllowUnused (or the template reads
// its input as a whole, as {{json this}} does). With an input schema the
// values (defaults applied) are checked against it: a required value
// missing, a value of the wrong type, and (unless in.AllowUnused, which
// leaves it out) a value for a name the schema does not name (as a
// property, or by an additionalProperties it gives) are errors.
//
// A template that includes partials ({{> KEY}}) renders them only
// through a Renderer, which reads them from a Store; rendered here, a
// partial is ErrPartialUnavailable.
//
// Errors are invalid-input errors with one field each, "variables.NAME",
// in name order; an output that would pass MaxRenderSize (loops
// included) is refused as soon as it would, for the field "variables",
// without building the rest.
func (t *Template) Render(ctx context.Context, in RenderInput) (Rendered, error) {
	// Each format apart: a render's frames are on the stack of the
	// server's goroutine, and a frame holds all its function's locals.
	if t.format != FormatDotprompt {
		return t.renderPlain(in)
	}
	return t.renderDotprompt(ctx, in)
}

// renderPlain renders a plain version (see Render).
func (t *Template) renderPlain(in RenderInput) (Rendered, error) {
	values := make(map[string]string, len(in.Values))
	var fe fieldErrors
	for _, name := range sortedNames(in.Values) {
		s, ok := in.Values[name].(string)
		if !ok {
			fe.add("variables."+name, "must be a string: the version is plain")
			continue
		}
		values[name] = s
	}
	if len(fe) > 0 {
		return Rendered{}, fe.err()
	}
	var opts []RenderOption
	if in.AllowUnused {
		opts = append(opts, AllowUnused())
	}
	text, err := t.v.Render(values, opts...)
	if err != nil {
		return Rendered{}, err
	}
	return Rendered{Messages: []Message{{Role: "user", Content: []Part{{Text: text}}}}, Text: text}, nil
}

// renderDotprompt renders a dotprompt version (see Render).
func (t *Template) renderDotprompt(ctx context.Context, in RenderInput) (Rendered, error) {
	var fe fieldErrors
	values := t.fm.values(in, &fe)
	if t.fm.schema == nil && !in.AllowUnused && !t.dp.ReadsAll() {
		for _, name := range sortedNames(in.Values) {
			if _, found := slices.BinarySearch(t.vars, name); !found && !in.partials.reads(name) {
				fe.add("variables."+name, "is not used by this version")
			}
		}
	}
	for i, m := range in.History {
		if !slices.Contains(Roles, m.Role) {
			fe.add("history["+strconv.Itoa(i)+"].role", "must be system, user, model or tool")
		}
	}
	if len(fe) > 0 {
		return Rendered{}, fe.err()
	}
	res, err := t.dp.Render(ctx, dotprompt.Data{Input: values, Context: in.Context, History: toDotprompt(in.History)},
		dotprompt.Options{MaxBytes: MaxRenderSize, Partials: in.partials.resolver()})
	if err != nil {
		return Rendered{}, renderError(ctx, err)
	}
	return Rendered{Messages: fromDotprompt(res.Messages), Text: res.Text, Model: t.fm.model, Config: t.fm.config, Output: t.fm.output}, nil
}

// renderError is the error of a dotprompt render that failed with err.
func renderError(ctx context.Context, err error) error {
	var fe fieldErrors
	var le *dotprompt.LimitError
	switch {
	case errors.As(err, &le) && le.What == "bytes":
		fe.add("variables", "would render a text of more than "+strconv.Itoa(le.Limit)+" bytes, over the limit of "+strconv.Itoa(MaxRenderSize)+" bytes (4 MiB)")
		return fe.err()
	case errors.As(err, &le):
		fe.add("variables", "would take more than "+strconv.Itoa(le.Limit)+" steps to render, over the limit")
		return fe.err()
	case errors.Is(err, dotprompt.ErrRender):
		fe.add("variables", "cannot be rendered: "+err.Error())
		return fe.err()
	case ctx.Err() != nil:
		return ContextDone(ctx.Err())
	}
	return renderPartialError(err)
}

func sortedNames(m map[string]any) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func toDotprompt(ms []Message) []dotprompt.Message {
	if len(ms) == 0 {
		return nil
	}
	out := make([]dotprompt.Message, len(ms))
	for i, m := range ms {
		out[i].Role = m.Role
		for _, p := range m.Content {
			dp := dotprompt.Part{Text: p.Text}
			if p.Media != nil {
				dp = dotprompt.Part{Media: &dotprompt.Media{URL: p.Media.URL, ContentType: p.Media.ContentType}}
			}
			out[i].Content = append(out[i].Content, dp)
		}
	}
	return out
}

// fromDotprompt keeps text and media parts; a pending part (from
// {{section}}), which carries only metadata, is left out.
func fromDotprompt(ms []dotprompt.Message) []Message {
	out := make([]Message, 0, len(ms))
	// The parts of all messages are slices of one array.
	n := 0
	for _, m := range ms {
		n += len(m.Content)
	}
	parts := make([]Part, 0, n)
	for _, m := range ms {
		start := len(parts)
		for _, p := range m.Content {
			switch {
			case p.Media != nil:
				parts = append(parts, Part{Media: &Media{URL: p.Media.URL, ContentType: p.Media.ContentType}})
			case p.Text != "" || p.Metadata == nil:
				parts = append(parts, Part{Text: p.Text})
			}
		}
		out = append(out, Message{Role: m.Role, Content: parts[start:len(parts):len(parts)]})
	}
	return out
}
