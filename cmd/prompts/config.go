package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/client"
)

// userAgent names the command in the server's logs.
const userAgent = "promptkit-prompts-cli/1"

// flags is one command's flag set and what it says of itself.
type flags struct {
	*flag.FlagSet
	e             *env
	args, summary string
	// arg names the positional argument in errors, "KEY" (a prompt's) by
	// default, and argOf whose it is ("the prompt's").
	arg, argOf string

	url, apiKey, project string
	json                 bool
}

// newFlags makes the flag set of a command, with -url and -api-key, and
// -project when the command names prompts by key in a project.
func newFlags(e *env, name string, project bool) *flags {
	f := &flags{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError), e: e}
	for _, c := range commands() {
		if c.name == name {
			f.args, f.summary = c.args, c.summary
		}
	}
	f.SetOutput(io.Discard) // parse reports errors itself
	f.Usage = func() {}
	f.StringVar(&f.url, "url", "", "the server's root URL, as client.New takes it (default $PROMPTS_URL)")
	f.StringVar(&f.apiKey, "api-key", "", "the API key (default $PROMPTS_API_KEY, which is safer: a flag shows in ps)")
	if project {
		f.StringVar(&f.project, "project", "", "the project: its slug, or its id (default $PROMPTS_PROJECT)")
	}
	return f
}

// jsonFlag adds -json.
func (f *flags) jsonFlag() {
	f.BoolVar(&f.json, "json", false, "answer in JSON, for scripts: what the server sent, exactly (text answers escape control characters)")
}

// parse parses args, flags before or after the positional arguments
// (Go's flag stops at the first non-flag: parse goes on after it; "--"
// ends the flags). It returns the positional arguments, or ok false and
// the exit status: 0 after -h (the usage on stdout), 1 for a bad command
// line (the problem and the usage on stderr), also when the number of
// positional arguments is not want.
func (f *flags) parse(args []string, want int) (pos []string, code int, ok bool) {
	for {
		err := f.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			f.usage(f.e.stdout)
			return nil, exitOK, false
		}
		if err != nil {
			return nil, f.bad("%v", err), false
		}
		rest := f.Args()
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		if len(rest) == 0 {
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	if want >= 0 && len(pos) != want { // want < 0: any number
		switch {
		case want == 0:
			return nil, f.bad("unexpected argument %q", pos[0]), false
		case len(pos) == 0:
			return nil, f.bad("%s %s is required", cmp.Or(f.argOf, "the prompt's"), cmp.Or(f.arg, "KEY")), false
		default:
			return nil, f.bad("one %s only; %q is one too many", cmp.Or(f.arg, "KEY"), pos[1]), false
		}
	}
	return pos, exitOK, true
}

// bad reports a bad command line, with the usage, and returns exitError.
func (f *flags) bad(format string, args ...any) int {
	fmt.Fprintf(f.e.stderr, "prompts %s: %s\n\n", f.Name(), fmt.Sprintf(format, args...))
	f.usage(f.e.stderr)
	return exitError
}

func (f *flags) usage(w io.Writer) {
	fmt.Fprintf(w, "Usage: prompts %s %s\n\n%s%s.\n\nFlags:\n", f.Name(), f.args, strings.ToUpper(f.summary[:1]), f.summary[1:])
	f.SetOutput(w)
	f.PrintDefaults()
	f.SetOutput(io.Discard)
}

// client makes the client of the server the flags and the environment
// name.
func (f *flags) client() (*client.Client, error) {
	url := first(f.url, f.e.getenv("PROMPTS_URL"))
	key := first(f.apiKey, f.e.getenv("PROMPTS_API_KEY"))
	switch {
	case url == "" && key == "":
		return nil, errors.New("no server given: set PROMPTS_URL and PROMPTS_API_KEY (or pass -url and -api-key)")
	case url == "":
		return nil, errors.New("no server URL: set PROMPTS_URL (or pass -url) to the server's root, such as https://prompts.example.com")
	case key == "":
		return nil, errors.New("no API key: set PROMPTS_API_KEY (or pass -api-key)")
	}
	// The root, as client.New takes it; a URL copied with the interface's
	// path works too.
	url = strings.TrimSuffix(strings.TrimSuffix(url, "/"), client.Prefix)
	cl, err := client.New(url, key, client.WithUserAgent(userAgent))
	if err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "client: "))
	}
	return cl, nil
}

// findProject returns the project the flags or the environment name, by
// slug or id.
func (f *flags) findProject(ctx context.Context, cl *client.Client) (prompts.Project, error) {
	name := first(f.project, f.e.getenv("PROMPTS_PROJECT"))
	if name == "" {
		return prompts.Project{}, errors.New("no project: pass -project SLUG (or set PROMPTS_PROJECT)")
	}
	if prompts.ValidID(name) {
		p, err := cl.GetProject(ctx, name)
		if err == nil {
			return p, nil
		}
		if !errors.Is(err, prompts.ErrNotFound) {
			return prompts.Project{}, err
		}
	}
	var slugs []string
	page := prompts.ProjectFilter{}
	for {
		list, more, err := cl.ListProjects(ctx, page)
		if err != nil {
			return prompts.Project{}, err
		}
		for _, p := range list {
			if p.Slug == name {
				return p, nil
			}
			slugs = append(slugs, p.Slug)
		}
		if !more || len(list) == 0 {
			break
		}
		page.After = list[len(list)-1].ID
	}
	if len(slugs) == 0 {
		return prompts.Project{}, fmt.Errorf("no project %q: the API key sees no project", name)
	}
	return prompts.Project{}, fmt.Errorf("no project %q that the API key sees; it sees %s", name, strings.Join(slugs, ", "))
}

// connect makes the client and finds the project.
func (f *flags) connect(ctx context.Context) (*client.Client, prompts.Project, error) {
	cl, err := f.client()
	if err != nil {
		return nil, prompts.Project{}, err
	}
	p, err := f.findProject(ctx, cl)
	return cl, p, err
}

// count says n things, in words that agree with the number: "1 prompt",
// "2 prompts".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

func first(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// environment reads an -environment flag's value.
func environment(s string) (prompts.Environment, error) {
	e := prompts.Environment(s)
	if !e.Valid() {
		return "", fmt.Errorf("the environment %q is not one of production and staging", s)
	}
	return e, nil
}

// describe says what went wrong with a call of the server, for a person,
// on one line: what the server sent is sanitized.
func describe(err error) string { return sanitize(describeRaw(err)) }

func describeRaw(err error) string {
	var pe *prompts.Error
	if !errors.As(err, &pe) {
		return err.Error()
	}
	switch pe.Code {
	case prompts.CodeUnauthenticated:
		return "the server refused the API key: check PROMPTS_API_KEY (or -api-key)"
	case prompts.CodeForbidden:
		return "the API key may not do this: " + pe.Error()
	case prompts.CodeUnavailable:
		return "the server cannot be reached, or cannot answer now: " + pe.Error()
	case prompts.CodeVariablesChanged:
		msg := strings.TrimSuffix(pe.Message, " (allow_variable_change allows it)")
		return msg + ": pass -allow-variable-change to allow it"
	case prompts.CodePreconditionFailed:
		return "the prompt changed while this ran, and nothing was changed: run it again"
	}
	return pe.Error()
}

// sanitize makes text from the server safe for one line, or one cell of
// a table, on a terminal: what a terminal would act upon (control
// characters, escape sequences, line breaks, tabs, other characters that
// are not printable, such as bidirectional overrides) and bytes that are
// not UTF-8 are written as Go escapes them: "\x1b[31m" is shown as
// `\x1b[31m`, a line break as `\n`.
func sanitize(s string) string { return escape(s, false) }

// sanitizeText is sanitize for text of many lines, such as a prompt's
// content: line breaks (LF and CRLF) and tabs are kept.
func sanitizeText(s string) string { return escape(s, true) }

func escape(s string, multiline bool) string {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !keep(s, i, r, n, multiline) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case keep(s, i, r, n, multiline):
			b.WriteString(s[i : i+n])
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		default:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
		i += n
	}
	return b.String()
}

// keep reports whether the rune r, n bytes at s[i:], is shown as it is.
func keep(s string, i int, r rune, n int, multiline bool) bool {
	switch {
	case r == utf8.RuneError && n == 1:
		return false
	case r == ' ':
		return true
	case multiline && (r == '\n' || r == '\t'):
		return true
	case multiline && r == '\r':
		return i+1 < len(s) && s[i+1] == '\n'
	}
	return strconv.IsPrint(r)
}

// newTable returns a writer of aligned columns onto w: write rows with
// row, then Flush. Every row ends each cell with a tab, so that the
// columns of all rows align; the spaces that pads the last ones are
// trimmed.
func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(&trimWriter{w: w}, 0, 0, 2, ' ', 0)
}

// row writes one row of a table, each cell sanitized.
func row(w io.Writer, cells ...string) {
	for i, c := range cells {
		cells[i] = sanitize(c)
	}
	fmt.Fprintln(w, strings.Join(cells, "\t")+"\t")
}

// trimWriter writes lines without their trailing spaces.
type trimWriter struct {
	w    io.Writer
	line []byte // a line not yet ended
}

func (t *trimWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			t.line = append(t.line, p...)
			break
		}
		t.line = append(t.line, p[:i]...)
		p = p[i+1:]
		out := append(bytes.TrimRight(t.line, " "), '\n')
		t.line = t.line[:0]
		if _, err := t.w.Write(out); err != nil {
			return 0, err
		}
	}
	return n, nil
}
