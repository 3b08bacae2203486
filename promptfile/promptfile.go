// Package promptfile reads and writes prompt files: a prompt kept in a
// repository as a text file, reviewed in pull requests like code, and
// made to agree with a server by the prompts command (cmd/prompts).
//
// The format follows Google's Dotprompt convention: the file of the
// prompt with key support/greeting is support/greeting.prompt (each '/'
// of the key a directory), and holds a YAML front matter between two
// lines of three dashes, then the template:
//
//	---
//	name: Support greeting
//	description: The first answer to a customer.
//	metadata:
//	  model: gpt-5
//	  temperature: 0.2
//	---
//	Hello {{name}}, thanks for writing to us.
//
// The front matter holds at most three fields: name (the prompt's name;
// without it, the name is the key), description (absent or null: none)
// and metadata (a mapping that becomes the version's metadata_ JSON
// object; absent or null: none). Any other field is an error, so that a
// typo never passes unseen: put what a tool needs under metadata.
// Numbers in metadata keep every digit (1e400 stays 1e400, 0.20 stays
// 0.20); YAML anchors, aliases and merge keys are refused.
//
// The template is every byte after the line that closes the front
// matter, to the end of the file, as it is: trailing newlines (or none),
// lines of dashes, carriage returns and any Unicode survive a round trip
// through a server. It must not be empty. A byte order mark before the
// first line is skipped; the delimiter lines may end in spaces or a
// carriage return.
//
// Parse and ReadDir report a broken file as an *Error naming the file
// and the line. Format writes the same front matter and template back, so
// that Parse(Format(f)) is f.
//
// The package is public so that programs read the files exactly as the
// command does: a test in the repository that holds them (every file
// parses, every template uses the variables its caller fills), or a
// service that loads them into a memstore at start.
package promptfile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/promptkit/prompts"
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
	// Metadata is the version's metadata_, compact JSON text (an object),
	// or "" for none.
	Metadata prompts.Metadata
	// Template is the version's content, byte for byte.
	Template string
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
	open, rest, _ := cutLine(body)
	if body == "" {
		return File{}, errorf(1, "the file is empty: it must start with a line of three dashes (---), the front matter's first line")
	}
	if !isDelimiter(open) {
		return File{}, errorf(1, "the file must start with a line of three dashes (---), the front matter's first line")
	}
	// The front matter runs to the next delimiter line.
	fmStart := len(body) - len(rest)
	pos, line, closeLine := fmStart, 2, 0
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
		return File{}, errorf(1, "the front matter that starts on line 1 is not closed: no line of three dashes (---) follows it")
	}
	frontMatter := body[fmStart:pos]
	_, template, found := cutLine(body[pos:])
	templateLine := closeLine + 1
	if !found {
		templateLine = closeLine // the file ends with the delimiter
	}

	if err := checkText(frontMatter, 2); err != nil {
		return File{}, err
	}
	if err := checkText(template, templateLine); err != nil {
		return File{}, err
	}
	if template == "" {
		return File{}, errorf(templateLine, "the template is empty: a prompt's content must not be empty (it starts after the --- line %d)", closeLine)
	}
	f, lines, err := parseFrontMatter(frontMatter, 1)
	if err != nil {
		return File{}, err
	}
	f.Template = template
	lines.template = templateLine
	if err := f.check(lines); err != nil {
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
}

// check applies a prompt's rules to f, each error at its field's line.
func (f File) check(at lines) error {
	name := f.Name
	if name == "" {
		name = "x" // the key, which its own rule checks
	}
	perr := prompts.NewPrompt{ProjectID: "x", Key: "x", Name: name, Description: f.Description}.Validate()
	verr := prompts.NewVersion{PromptID: "x", Content: f.Template, Metadata: f.Metadata}.Validate()
	var errs []error
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
			case "content":
				field, line = "the template", at.template
			}
			errs = append(errs, errorf(line, "%s %s", field, fe.Detail))
		}
	}
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

// Format writes f as a prompt file: the front matter (name, description
// and metadata, each only when set), then the template as it is. It fails
// only for metadata that is not a JSON object.
func Format(f File) ([]byte, error) {
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
