package prompts

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
)

// A version's content is a template. A variable is {{name}}, with spaces
// (U+0020 only) allowed inside the braces, as in {{ name }}; a name is an
// ASCII letter or '_' followed by ASCII letters, digits and '_'. Any other
// {{…}} is plain text. Reading left to right, a variable starts at the
// first "{{" that begins one: in "{{{x}}}" the variable is the inner
// {{x}}, between a '{' and a '}' of plain text.

// Variables returns the names of the variables of content, each once,
// sorted by code point ("_x" before "a"); an empty, non-nil slice when
// there are none.
func Variables(content string) []string {
	names := []string{}
	scanVariables(content, func(_, _ int, name string) {
		names = append(names, name)
	})
	slices.Sort(names)
	return slices.Clip(slices.Compact(names))
}

// scanVariables calls f with the start and end (exclusive) of every
// variable of content, left to right, and its name.
func scanVariables(content string, f func(start, end int, name string)) {
	for i := 0; ; {
		j := strings.Index(content[i:], "{{")
		if j < 0 {
			return
		}
		start := i + j
		end, name := variableAt(content, start)
		if end < 0 {
			i = start + 1 // "{{" that begins no variable is text
			continue
		}
		f(start, end, name)
		i = end
	}
}

// variableAt reads the variable that starts at content[start:], which
// begins with "{{": the end of it and its name, or -1 if none starts there.
func variableAt(content string, start int) (int, string) {
	i := start + 2
	for i < len(content) && content[i] == ' ' {
		i++
	}
	n := i
	for i < len(content) && isNameByte(content[i], i == n) {
		i++
	}
	if i == n {
		return -1, ""
	}
	name := content[n:i]
	for i < len(content) && content[i] == ' ' {
		i++
	}
	if !strings.HasPrefix(content[i:], "}}") {
		return -1, ""
	}
	return i + 2, name
}

func isNameByte(c byte, first bool) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || !first && c >= '0' && c <= '9'
}

// RenderOption changes how Render treats the values it is given.
type RenderOption func(*renderConfig)

type renderConfig struct{ allowUnused bool }

// AllowUnused makes Render ignore values for names the version does not
// use, rather than refuse them.
func AllowUnused() RenderOption { return func(c *renderConfig) { c.allowUnused = true } }

// MaxRenderSize is the size in bytes of the largest text Render builds. A
// render whose text would be larger is refused before anything is built:
// a value of a few kilobytes repeated by a variable used many times would
// otherwise make one request build gigabytes.
const MaxRenderSize = 4 << 20

// Render returns the version's content with every variable replaced by
// its value, in one pass: a value is inserted as it is, so a value that
// holds {{x}} stays {{x}} in the text. It is strict: a variable without a
// value, and (unless AllowUnused) a value for a name the version does not
// use, are an invalid-input error with one field each, "variables.NAME",
// in name order. A text that would be larger than MaxRenderSize is an
// invalid-input error for the field "variables", naming both sizes; it is
// measured, not built.
//
// A dotprompt version renders as Template.Render does, and Render returns
// the text parts of its messages joined (use RenderMessages for the
// messages, or to render with a context).
func (v PromptVersion) Render(values map[string]string, opts ...RenderOption) (string, error) {
	var cfg renderConfig
	for _, o := range opts {
		o(&cfg)
	}
	if v.TemplateFormat == FormatDotprompt {
		in := RenderInput{Values: make(map[string]any, len(values)), AllowUnused: cfg.allowUnused}
		for k, val := range values {
			in.Values[k] = val
		}
		out, err := v.RenderMessages(context.Background(), in)
		return out.Text, err
	}
	vars := v.Variables
	if vars == nil {
		vars = Variables(v.Content)
	}
	var fe fieldErrors
	for _, name := range vars {
		if _, ok := values[name]; !ok {
			fe.add("variables."+name, "is missing: the version uses it")
		}
	}
	if !cfg.allowUnused && len(values) > 0 {
		var unused []string
		for name := range values {
			if _, found := slices.BinarySearch(vars, name); !found {
				unused = append(unused, name)
			}
		}
		slices.Sort(unused)
		for _, name := range unused {
			fe.add("variables."+name, "is not used by this version")
		}
	}
	if len(fe) > 0 {
		slices.SortStableFunc(fe, func(a, b FieldError) int { return strings.Compare(a.Field, b.Field) })
		return "", fe.err()
	}
	// The size first: the text is built only once it is known to fit.
	size := len(v.Content)
	var unlisted []string // in Content, not in v.Variables: a version built by hand
	scanVariables(v.Content, func(start, end int, name string) {
		val, ok := values[name]
		if !ok {
			unlisted = append(unlisted, name)
		}
		if size <= math.MaxInt-len(val) { // else it stays far over the limit
			size += len(val) - (end - start)
		}
	})
	if len(unlisted) > 0 {
		slices.Sort(unlisted)
		for _, name := range slices.Compact(unlisted) {
			fe.add("variables."+name, "is missing: the version uses it")
		}
		return "", fe.err()
	}
	if size > MaxRenderSize {
		fe.add("variables", "would render a text of "+strconv.Itoa(size)+" bytes, over the limit of "+strconv.Itoa(MaxRenderSize)+" bytes (4 MiB)")
		return "", fe.err()
	}
	var b strings.Builder
	b.Grow(size)
	last := 0
	scanVariables(v.Content, func(start, end int, name string) {
		b.WriteString(v.Content[last:start])
		b.WriteString(values[name])
		last = end
	})
	b.WriteString(v.Content[last:])
	return b.String(), nil
}

// RenderRequest asks for the rendering of one version of a prompt: the version
// active in Environment, or the version numbered VersionNumber (at most
// one of the two; neither means the version active in Production), with
// Variables, the values of its variables (see PromptVersion.Render).
//
// Variables, Context, History and AllowUnused are those of RenderInput
// (see Template.Render): for a plain version the values must be strings.
type RenderRequest struct {
	PromptID      string
	Environment   Optional[Environment] // null counts as absent
	VersionNumber Optional[int]         // null counts as absent
	Variables     map[string]any        // required; empty when the version has no variables
	Context       map[string]any        // optional: Dotprompt's @ data
	History       []Message             // optional: what {{history}} inserts
	AllowUnused   bool
	// Subject, optional ("" is none), is who the render is for: where the
	// environment (or a partial's) holds a split, the version it serves
	// the subject (ActiveQuery.Subject); without one, the split's first
	// entry's. A render by number renders that version,
	// and the subject picks only its partials' versions (in Production,
	// where a render by number resolves them).
	Subject string
	// Shared lets Renderer.Render return the version the store shares
	// with other callers instead of a copy, as ActiveQuery.Shared does
	// for a read: the caller changes nothing it points to (its change
	// summary, metadata and variables). A caller that encodes the answer
	// and drops it, as the HTTP interface does, saves the copy.
	Shared bool
}

// Input returns the RenderInput of in.
func (in RenderRequest) Input() RenderInput {
	return RenderInput{Values: in.Variables, Context: in.Context, History: in.History, AllowUnused: in.AllowUnused}
}

// Validate reports every field that breaks a rule, at once.
func (in RenderRequest) Validate() error {
	var fe fieldErrors
	checkRef(&fe, "prompt_id", in.PromptID, true)
	hasEnv, hasNumber := in.Environment.HasValue(), in.VersionNumber.HasValue()
	switch {
	case hasEnv && hasNumber:
		fe.add("environment", "and version_number cannot both be given: give one")
	case hasEnv:
		in.Environment.Value.check(&fe, "environment")
	case hasNumber && (in.VersionNumber.Value < 1 || in.VersionNumber.Value > math.MaxInt32):
		fe.add("version_number", "must be 1 to 2147483647")
	}
	if in.Variables == nil {
		fe.add("variables", "is required: an object of the values, {} when the version has no variables")
	}
	return fe.err()
}

// Target returns the environment whose active version the request
// renders (Production when neither it nor a version number is given), or
// "" when it names a version by number. It assumes in is valid.
func (in RenderRequest) Target() Environment {
	switch {
	case in.VersionNumber.HasValue():
		return ""
	case in.Environment.HasValue():
		return in.Environment.Value
	default:
		return Production
	}
}

// VariableChange is what a promotion changes in the variables an
// environment's active version uses: the names the new version adds and
// those it removes, each sorted; and the variables both use whose type or
// requiredness in the input schema differs (see DiffSignatures), by name.
type VariableChange struct {
	Added, Removed []string
	Inputs         []InputChange
}

// DiffVariables returns what going from the variables from to the
// variables to (each sorted, as PromptVersion.Variables is) adds and
// removes; the zero VariableChange when they are the same.
func DiffVariables(from, to []string) VariableChange {
	var c VariableChange
	for _, n := range to {
		if _, ok := slices.BinarySearch(from, n); !ok {
			c.Added = append(c.Added, n)
		}
	}
	for _, n := range from {
		if _, ok := slices.BinarySearch(to, n); !ok {
			c.Removed = append(c.Removed, n)
		}
	}
	return c
}

// Changed reports whether the variables differ.
func (c VariableChange) Changed() bool { return len(c.Added)+len(c.Removed)+len(c.Inputs) > 0 }

// VariablesChanged is the error of an activation refused by the promotion
// guard: the version to activate uses other variables than the one
// active there now, and the caller did not allow it. Its message names
// them; its Fields hold one entry a variable, "variables.NAME", "is
// added" or "is removed", then one for each of c.Inputs, with its Detail
// (as "changes type from string to integer" or "becomes required").
//
// For Store authors (see "Writing a Store" in the package doc).
func VariablesChanged(c VariableChange) error {
	var msg strings.Builder
	msg.WriteString("the version's variables differ from those of the version active there")
	e := &Error{Code: CodeVariablesChanged}
	if len(c.Added) > 0 {
		msg.WriteString("; added: " + strings.Join(c.Added, ", "))
		for _, n := range c.Added {
			e.Fields = append(e.Fields, FieldError{Field: "variables." + n, Detail: "is added"})
		}
	}
	if len(c.Removed) > 0 {
		msg.WriteString("; removed: " + strings.Join(c.Removed, ", "))
		for _, n := range c.Removed {
			e.Fields = append(e.Fields, FieldError{Field: "variables." + n, Detail: "is removed"})
		}
	}
	if len(c.Inputs) > 0 {
		msg.WriteString("; changed in the input schema: ")
		for i, in := range c.Inputs {
			if i > 0 {
				msg.WriteString(", ")
			}
			msg.WriteString(in.Name)
			e.Fields = append(e.Fields, FieldError{Field: "variables." + in.Name, Detail: in.Detail()})
		}
	}
	msg.WriteString(" (allow_variable_change allows it)")
	e.Message = msg.String()
	return e
}
