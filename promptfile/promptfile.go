// Package promptfile reads and writes prompt files: a prompt kept in a
// repository as a text file, reviewed in pull requests like code, and
// made to agree with a server by the prompts command (cmd/prompts).
//
// A prompt file is a Dotprompt file (github.com/google/dotprompt): the
// file of the prompt with key support/greeting is support/greeting.prompt
// (each '/' of the key a directory), and holds a YAML front matter
// between two lines of three dashes, then the template:
//
//	---
//	name: Support greeting
//	description: The first answer to a customer.
//	model: googleai/gemini-2.5-flash
//	config:
//	  temperature: 0.2
//	input:
//	  schema:
//	    name: string
//	---
//	{{role "system"}}
//	You answer customers of Acme.
//	{{role "user"}}
//	Hello, I am {{name}}.
//
// Such a file makes a version in the dotprompt format: name is the
// prompt's name (without it, the name is the key), description its
// description (absent or null: none), and every other key of the front
// matter, as it is, the version's metadata_ JSON object (model, config,
// input, output, tools, metadata, namespaced keys such as myapp.owner);
// no other key: the metadata_ {}, for a front matter it is still (the
// version renders trimmed, as Dotprompt renders the body of a file with a
// front matter). The body is the template. A file without front matter
// (its first line, after empty and # lines, is not ---) is a Dotprompt
// source too: the whole file is the template of a dotprompt version
// without metadata_, which renders every byte, as Dotprompt renders it.
//
// The front-matter key prompts.format: plain marks a plain version (the
// {{name}} templates of the first releases). Its front matter holds at
// most name, description and metadata (a mapping that becomes the
// version's metadata_; absent or null: none): any other key is an error,
// so that a typo never passes unseen. Format writes this form for plain
// versions. prompts.format: dotprompt may be written too (it is then
// kept in metadata_); the namespace prompts. holds no other key.
//
// A file of the first releases (no prompts.format, a front matter of
// name, description and metadata only) reads as a Dotprompt file whose
// metadata_ is {"metadata": …}; File.Legacy gives its plain reading,
// which the prompts command uses for a prompt whose latest version is
// plain, so that such files apply unchanged (docs/prompt-files.md).
//
// Numbers in the front matter keep every digit (1e400 stays 1e400, 0.20
// stays 0.20); YAML anchors, aliases and merge keys are refused.
//
// The template is every byte after the line that closes the front
// matter, to the end of the file, as it is: trailing newlines (or none),
// lines of dashes, carriage returns and any Unicode survive a round trip
// through a server. It must not be empty, and in a Dotprompt file it must
// parse as a Dotprompt template. Rendering trims a dotprompt template's
// surrounding white space when the version has front matter (metadata_),
// as Dotprompt does with the body of a file that has one, so that a file
// renders the same here and in Genkit. Lines before the
// front matter that are empty or start with # (a licence header) are
// skipped, as Dotprompt skips them; a byte order mark before the first
// line too; the delimiter lines may end in spaces or a carriage return.
//
// Parse and ReadDir report a broken file as an *Error naming the file
// and the line. Format writes the same front matter and template back, so
// that Parse(Format(f)) is f, except that a dotprompt File without
// metadata that needs a front matter (for its name or description, or a
// template that would read as one) reads back with the metadata {}.
//
// FS serves a project's prompts, at the versions active in an
// environment (of a split, its first entry's: a file cannot express a
// split), as such files: an fs.FS that Genkit (genkit.WithPromptFS,
// genkit.LoadPromptDirFromFS) and Dotprompt's DirStore load.
//
// The package is public so that programs read the files exactly as the
// command does: a test in the repository that holds them (every file
// parses, every template uses the variables its caller fills), or a
// service that loads them into a memstore at start.
package promptfile

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/internal/dotprompt"
)

// Ext is the extension of a prompt file.
const Ext = ".prompt"

// File is what a prompt file holds.
type File struct {
	// Name is the prompt's name; "" when the file names none, and then
	// the prompt's name is its key.
	Name string
	// Description is the prompt's description; nil when there is none.
	Description *string
	// Format is the version's template format: FormatDotprompt, or
	// FormatPlain for a file marked prompts.format: plain. Parse always
	// sets it; Format takes "" as FormatPlain.
	Format prompts.TemplateFormat
	// Metadata is the version's metadata_, compact JSON text (an object),
	// or "" for none: for a dotprompt file the front matter but name and
	// description, for a plain one its metadata field.
	Metadata prompts.Metadata
	// Template is the version's content, byte for byte.
	Template string
}

// Legacy returns the reading of f as a file of the first releases: when
// f is a Dotprompt file (without prompts.format) whose front matter holds
// nothing but name, description and a metadata mapping (or null), the
// plain version those releases made of it: the same name, description
// and template, the mapping as metadata_. ok is false for any other
// file.
func (f File) Legacy() (plain File, ok bool) {
	if f.Format != prompts.FormatDotprompt {
		return File{}, false
	}
	plain = File{Name: f.Name, Description: f.Description, Format: prompts.FormatPlain, Template: f.Template}
	if emptyIsNull(f.Metadata).IsNull() {
		return plain, true
	}
	v, err := decodeJSON(string(f.Metadata))
	o, isObject := v.(map[string]any)
	if err != nil || !isObject || len(o) != 1 {
		return File{}, false
	}
	inner, found := o[fieldMetadata]
	switch inner.(type) {
	case nil:
		if !found {
			return File{}, false
		}
		return plain, true
	case map[string]any:
		// The inner object's text as it is, numbers' digits included.
		var raw map[string]json.RawMessage
		if err := json.Unmarshal([]byte(f.Metadata), &raw); err != nil {
			return File{}, false
		}
		plain.Metadata = prompts.Metadata(raw[fieldMetadata])
		return plain, true
	}
	return File{}, false
}

// Error is a problem with a prompt file, at a line of it.
type Error struct {
	Path string // the file, slash-separated; "" when Parse had no name for it
	Line int    // the line, from 1; 0 when the problem is not on one line
	Msg  string // what is wrong
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteByte(':')
	}
	if e.Line > 0 {
		if e.Path == "" {
			b.WriteString("line ")
		}
		b.WriteString(strconv.Itoa(e.Line))
		b.WriteByte(':')
	}
	if b.Len() > 0 {
		b.WriteByte(' ')
	}
	b.WriteString(e.Msg)
	return b.String()
}

func errorf(line int, format string, args ...any) *Error {
	return &Error{Line: line, Msg: fmt.Sprintf(format, args...)}
}

// bom is the byte order mark some editors put first.
const bom = "\ufeff"

// Parse reads a prompt file. It checks the file against the format and
// against the rules of a prompt (a name of at most 256 characters, not
// only white space; a description of at most 4,096; metadata as a
// version takes it; no NUL character anywhere). A problem is an *Error
// with the line it is on.
func Parse(data []byte) (File, error) {
	body := strings.TrimPrefix(string(data), bom)
	if body == "" {
		return File{}, errorf(1, "the file is empty: a prompt file holds a template, after a front matter between two lines of three dashes (---) or alone")
	}
	// Empty lines and # comments may come first, as Dotprompt reads them.
	opening, rest := 1, body
	for {
		l, next, found := cutLine(rest)
		if isDelimiter(l) {
			rest = next
			break
		}
		if !found || !(strings.HasPrefix(l, "#") || strings.Trim(l, " \t\r") == "") {
			// No front matter: the whole file is the template, of a
			// dotprompt version without metadata_, as Dotprompt reads a
			// source without one.
			return parseBare(body)
		}
		rest = next
		opening++
	}
	// The front matter runs to the next delimiter line.
	fmStart := len(body) - len(rest)
	pos, line, closeLine := fmStart, opening+1, 0
	for {
		l, next, found := cutLine(body[pos:])
		if isDelimiter(l) {
			closeLine = line
			break
		}
		if !found {
			break
		}
		pos = len(body) - len(next)
		line++
	}
	if closeLine == 0 {
		return File{}, errorf(opening, "the front matter that starts on line %d is not closed: no line of three dashes (---) follows it", opening)
	}
	frontMatter := body[fmStart:pos]
	_, template, found := cutLine(body[pos:])
	templateLine := closeLine + 1
	if !found {
		templateLine = closeLine // the file ends with the delimiter
	}

	if err := checkText(frontMatter, opening+1); err != nil {
		return File{}, err
	}
	if err := checkText(template, templateLine); err != nil {
		return File{}, err
	}
	if template == "" {
		return File{}, errorf(templateLine, "the template is empty: a prompt's content must not be empty (it starts after the --- line %d)", closeLine)
	}
	f, lines, err := parseFrontMatter(frontMatter, opening)
	if err != nil {
		return File{}, err
	}
	if f.Format == prompts.FormatDotprompt && f.Metadata.IsNull() {
		// A front matter makes a metadata_, {} when it holds nothing but
		// name and description: the version renders its template trimmed,
		// as Dotprompt renders the body of a file with a front matter.
		f.Metadata = "{}"
	}
	f.Template = template
	lines.template = templateLine
	if err := f.check(lines); err != nil {
		return File{}, err
	}
	return f, nil
}

// parseBare reads a file without front matter: a dotprompt template.
func parseBare(template string) (File, error) {
	if err := checkText(template, 1); err != nil {
		return File{}, err
	}
	f := File{Format: prompts.FormatDotprompt, Template: template}
	if err := f.check(lines{template: 1}); err != nil {
		return File{}, err
	}
	return f, nil
}

// cutLine returns the first line of s without its "\n", the rest after
// it, and whether there was a "\n".
func cutLine(s string) (line, rest string, found bool) {
	line, rest, found = strings.Cut(s, "\n")
	return line, rest, found
}

// isDelimiter reports whether l (without its "\n") is a line of three
// dashes, maybe followed by spaces, tabs or a carriage return.
func isDelimiter(l string) bool {
	return strings.TrimRight(l, " \t\r") == "---"
}

// checkText refuses invalid UTF-8 and the NUL character, naming the line
// (s starts on line first).
func checkText(s string, first int) error {
	line := first
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			return errorf(line, "invalid UTF-8: a prompt file is UTF-8 text")
		case r == 0:
			return errorf(line, "a NUL character: no text of a prompt may hold one")
		case r == '\n':
			line++
		}
		i += n
	}
	return nil
}

// lines are the lines the fields of a File are on, for the errors of
// their rules.
type lines struct {
	name, description, metadata, template int
	keys                                  map[string]int // a dotprompt file's other keys
}

// check applies a prompt's rules to f, each error at its field's line.
func (f File) check(at lines) error {
	name := f.Name
	if name == "" {
		name = "x" // the key, which its own rule checks
	}
	perr := prompts.NewPrompt{ProjectID: "x", Key: "x", Name: name, Description: f.Description}.Validate()
	verr := prompts.NewVersion{PromptID: "x", Content: f.Template, Metadata: f.Metadata, TemplateFormat: f.Format}.Validate()
	var errs []*Error
	if f.Format == prompts.FormatDotprompt && f.Template != "" {
		var pe *dotprompt.ParseError
		if _, err := dotprompt.Parse(f.Template); errors.As(err, &pe) {
			errs = append(errs, errorf(at.template+pe.Line-1, "the template is not a valid Dotprompt template: column %d: %s (a plain template says so: prompts.format: plain)", pe.Column, pe.Msg))
		}
	}
	for _, err := range []error{perr, verr} {
		var pe *prompts.Error
		if !errors.As(err, &pe) {
			continue
		}
		for _, fe := range pe.Fields {
			field, line := fe.Field, 0
			switch fe.Field {
			case "name":
				line = at.name
			case "description":
				line = at.description
			case "metadata_":
				field, line = "metadata", at.metadata
				if f.Format == prompts.FormatDotprompt {
					field = "the front matter"
				}
			case "content":
				field, line = "the template", at.template
			default:
				// A rule on one key of a dotprompt file's metadata_.
				if rest, ok := strings.CutPrefix(fe.Field, "metadata_."); ok {
					key, _, _ := strings.Cut(rest, ".")
					field, line = rest, at.keys[key]
					if line == 0 {
						line = at.metadata
					}
				}
			}
			errs = append(errs, errorf(line, "%s %s", field, fe.Detail))
		}
	}
	slices.SortStableFunc(errs, func(a, b *Error) int { return cmp.Compare(a.Line, b.Line) })
	if len(errs) > 0 {
		return errs[0] // the first, by line: one at a time reads best
	}
	return nil
}

// Key returns the key of the prompt file at p (slash-separated, relative
// to the directory of prompt files): p without its extension. p must end
// in Ext and make a valid key.
func Key(p string) (string, error) {
	key, ok := strings.CutSuffix(p, Ext)
	if !ok {
		return "", &Error{Path: p, Msg: "not a prompt file: the name must end in " + Ext}
	}
	if !prompts.ValidKey(key) || !fs.ValidPath(key) {
		return "", &Error{Path: p, Msg: fmt.Sprintf("%q is not a valid prompt key: 1 to 128 ASCII letters, digits, '.', '_', '-' and '/', starting with a letter or digit", key)}
	}
	return key, nil
}

// Path returns the slash-separated path of the file of the prompt with
// key, relative to the directory of prompt files: the key and Ext. A key
// with an empty, "." or ".." segment (a/../b) has no file: it would name
// another one, or one outside the directory.
func Path(key string) (string, error) {
	if !prompts.ValidKey(key) {
		return "", fmt.Errorf("%q is not a valid prompt key", key)
	}
	if !fs.ValidPath(key) {
		return "", fmt.Errorf("the key %q cannot be a file name: it has an empty, \".\" or \"..\" segment", key)
	}
	return key + Ext, nil
}

// Prompt is one prompt file of a directory.
type Prompt struct {
	Key  string // from the file's path
	Path string // slash-separated, relative to the directory
	File
}

// PromptName returns the prompt's name: the file's, else the key.
func (p Prompt) PromptName() string {
	if p.Name != "" {
		return p.Name
	}
	return p.Key
}

// ReadDir reads every prompt file (a name ending in Ext) under the root of
// fsys, in lexical order of their paths, skipping directories whose name
// starts with a dot (.git, .github). Other files are ignored. Every broken
// file is reported, as an *Error each (errors.Join), and then no Prompt
// is returned: a directory is read whole or not at all.
func ReadDir(fsys fs.FS) ([]Prompt, error) {
	var (
		out  []Prompt
		errs []error
	)
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			errs = append(errs, &Error{Path: p, Msg: err.Error()})
			return nil
		}
		if d.IsDir() {
			if p != "." && strings.HasPrefix(d.Name(), ".") {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, Ext) {
			return nil
		}
		key, err := Key(p)
		if err != nil {
			errs = append(errs, err)
			return nil
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			errs = append(errs, &Error{Path: p, Msg: err.Error()})
			return nil
		}
		f, err := Parse(data)
		if err != nil {
			var pe *Error
			if errors.As(err, &pe) {
				pe.Path = p
			}
			errs = append(errs, err)
			return nil
		}
		out = append(out, Prompt{Key: key, Path: p, File: f})
		return nil
	})
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// Format writes f as a prompt file: the front matter, then the template
// as it is; for a dotprompt file without name, description and metadata,
// the template alone (unless it would read as having a front matter). The front matter holds name and description, each only when
// set, then for a dotprompt file the keys of the metadata, in their
// order; for a plain one (Format FormatPlain or "") prompts.format:
// plain, then metadata when set. It fails for metadata that is not a JSON
// object, and for a dotprompt file's metadata that has a key the front
// matter keeps for itself (name, description, prompts.*).
func Format(f File) ([]byte, error) {
	if f.Format == prompts.FormatDotprompt && f.Name == "" && f.Description == nil && f.Metadata.IsNull() {
		// No front matter, unless the template would read as one.
		if back, err := Parse([]byte(f.Template)); err == nil && back.Metadata.IsNull() && back.Template == f.Template {
			return []byte(f.Template), nil
		}
	}
	fm, err := formatFrontMatter(f)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Grow(len(fm) + len(f.Template) + 8)
	b.WriteString("---\n")
	b.Write(fm)
	b.WriteString("---\n")
	b.WriteString(f.Template)
	return b.Bytes(), nil
}

// ForVersion returns the file of version v of prompt p, as the prompts
// command's export and FS write it: the prompt's name (left out when it
// is the key, unless it is all a dotprompt version with the metadata_
// {} has for its front matter), its description, and the version's
// format, metadata and content. A dotprompt version without metadata_,
// whose prompt's name is its key and has no description, is a file
// without front matter.
func ForVersion(p prompts.Prompt, v prompts.PromptVersion) File {
	f := File{Name: p.Name, Description: p.Description, Format: v.TemplateFormat.Or(prompts.FormatPlain), Metadata: v.Metadata, Template: v.Content}
	// A dotprompt version with the metadata_ {} needs a front matter, of
	// its name if nothing else; one without metadata_ is a file without
	// front matter when its name is the key and it has no description.
	emptyObject := !f.Metadata.IsNull() && emptyIsNull(f.Metadata).IsNull()
	if f.Name == p.Key && (f.Description != nil || f.Format == prompts.FormatPlain || !emptyObject) {
		f.Name = ""
	}
	return f
}
