package prompts

import (
	"errors"
	"strconv"

	"github.com/promptkit/prompts/internal/dotprompt"
)

// TemplateFormat is the language of a version's content.
type TemplateFormat string

// The template formats. FormatPlain is the one of part of the HTTP
// interface's clients: {{name}} and nothing else (see Variables).
// FormatDotprompt is Dotprompt's (github.com/google/dotprompt): Handlebars
// without HTML escaping, with Dotprompt's helpers (role, history, media,
// section, json, ifEquals, unlessEquals), rendered to chat messages, and
// partials: {{> KEY}} includes the prompt of the same project with that
// key, at its version active in the environment rendered (see Renderer
// and TemplatePartials).
const (
	FormatPlain     TemplateFormat = "plain"
	FormatDotprompt TemplateFormat = "dotprompt"
)

// TemplateFormats are the formats, in order.
var TemplateFormats = []TemplateFormat{FormatPlain, FormatDotprompt}

// Valid reports whether f is one of TemplateFormats.
func (f TemplateFormat) Valid() bool { return f == FormatPlain || f == FormatDotprompt }

func (f TemplateFormat) check(fe *fieldErrors, field string) {
	if !f.Valid() {
		fe.add(field, "is "+strconv.Quote(string(f))+", not a known template format: plain or dotprompt")
	}
}

// Or returns f, or def when f is "" (a version stored before formats
// existed is plain: FormatPlain.Or is what a Store reads it as).
func (f TemplateFormat) Or(def TemplateFormat) TemplateFormat {
	if f == "" {
		return def
	}
	return f
}

// TemplateVariables returns the variables of content in format f, sorted,
// each once, non-nil: for FormatPlain those of Variables, for
// FormatDotprompt the top-level names the template reads. A dotprompt
// template that does not parse is an invalid-input error for the field
// "content" giving the line and column. It does not read the front
// matter: stores call VersionSignature, whose variables are an input
// schema's properties when the version has one.
func TemplateVariables(f TemplateFormat, content string) ([]string, error) {
	if f != FormatDotprompt {
		return Variables(content), nil
	}
	t, err := parseTemplate(content)
	if err != nil {
		return nil, err
	}
	vars := t.Variables()
	if vars == nil {
		vars = []string{}
	}
	return vars, nil
}

// parseTemplate parses a dotprompt template, or returns the invalid-input
// error for content.
func parseTemplate(content string) (*dotprompt.Template, error) {
	var fe fieldErrors
	t, err := dotprompt.Parse(content)
	var pe *dotprompt.ParseError
	switch {
	case errors.As(err, &pe):
		fe.add("content", "is not a valid dotprompt template: line "+strconv.Itoa(pe.Line)+", column "+strconv.Itoa(pe.Column)+": "+pe.Msg)
		return nil, fe.err()
	case err != nil:
		fe.add("content", "is not a valid dotprompt template: "+err.Error())
		return nil, fe.err()
	}
	return t, nil
}
