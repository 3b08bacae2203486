package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
	"github.com/promptkit/prompts/client"
)

// The commands for people at a terminal. Each answer names the prompt,
// the version and the environment; -json gives the same for scripts.

// runSnapshot writes the project's snapshot (the server's, as
// client.Snapshot reads it) to a file, whole or not at all.
func runSnapshot(ctx context.Context, e *env, args []string) int {
	f := newFlags(e, "snapshot", true)
	out := f.String("o", "", "the file to write (- for standard output)")
	if _, code, ok := f.parse(args, 0); !ok {
		return code
	}
	if *out == "" {
		return f.bad("-o is required")
	}
	cl, project, err := f.connect(ctx)
	if err != nil {
		return e.errorf("%s", describe(err))
	}
	s, err := cl.Snapshot(ctx, project.ID)
	if err != nil {
		return e.errorf("%s", describe(err))
	}
	data, err := s.MarshalJSON()
	if err != nil {
		return e.errorf("%v", err)
	}
	data = append(data, '\n')
	if *out == "-" {
		data = escapeJSON(data)
		_, err := e.stdout.Write(data)
		if err != nil {
			return e.errorf("%v", err)
		}
		return exitOK
	}
	if err := writeAtomically(*out, data); err != nil {
		return e.errorf("%v", err)
	}
	fmt.Fprintf(e.stdout, "wrote %s: %s of project %s, taken %s\n", *out, count(len(s.Prompts), "prompt", "prompts"), sanitize(project.Slug), s.TakenAt.Format(time.RFC3339))
	return exitOK
}

// writeAtomically writes data to name through a temporary file beside it
// and a rename: a reader (an application's build) sees the old file or
// the new one, never half of one.
func writeAtomically(name string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}

// versionAnswer is the JSON answer of get, render, promote and rollback.
type versionAnswer struct {
	Key         string               `json:"key"`
	PromptID    string               `json:"prompt_id"`
	Environment *prompts.Environment `json:"environment"` // null when read by -version
	Version     *int                 `json:"version"`     // null when nothing is active
	VersionID   *string              `json:"version_id"`
	Previous    *int                 `json:"previous_version,omitempty"` // promote, rollback: what was active before
	Changed     *bool                `json:"changed,omitempty"`          // promote: false when it was active already
	// The environment's split, when it holds one (the version is the one
	// it serves the subject, or its first entry's without one), and, for
	// promote and rollback, the split it held before.
	Split         []api.Share  `json:"split,omitempty"`
	PreviousSplit []api.Share  `json:"previous_split,omitempty"`
	Subject       *string      `json:"subject,omitempty"`   // get, render: the subject given
	Content       *string      `json:"content,omitempty"`   // get
	Metadata      api.Metadata `json:"metadata_,omitempty"` // get
	Text          *string      `json:"text,omitempty"`      // render
	// render: the version's format and its messages
	TemplateFormat *string           `json:"template_format,omitempty"`
	Messages       []renderedMessage `json:"messages,omitempty"`
}

// pick is the version a get or render reads: the one active in an
// environment (for a subject, when it holds a split), or a number.
type pick struct {
	env     string
	version int
	subject string
}

func (p *pick) flags(f *flags) {
	f.StringVar(&p.env, "environment", "", "read the version active in this environment: production (the default) or staging")
	f.IntVar(&p.version, "version", 0, "read this version instead")
	f.StringVar(&p.subject, "subject", "", "who the read is for (a user, a session, a tenant): where the environment holds a split, the version it serves this subject (without it, the split's first entry)")
}

// read finds the prompt by key and the version picked.
// It returns the client too, for what the command reads next.
func (p *pick) read(ctx context.Context, f *flags, key string) (*client.Client, prompts.ActivePrompt, *prompts.PromptVersion, error) {
	env := prompts.Production
	switch {
	case p.env != "" && p.version != 0:
		return nil, prompts.ActivePrompt{}, nil, errors.New("give -environment or -version, not both")
	case p.version < 0:
		return nil, prompts.ActivePrompt{}, nil, errors.New("-version must be 1 or more")
	case p.subject == "" && given(f, "subject"):
		return nil, prompts.ActivePrompt{}, nil, errors.New("-subject must not be empty: omit it to be served the split's first entry")
	case p.version != 0 && p.subject != "":
		return nil, prompts.ActivePrompt{}, nil, errors.New("-subject picks a version of an environment's split: give it with -environment, not -version")
	case p.env != "":
		var err error
		if env, err = environment(p.env); err != nil {
			return nil, prompts.ActivePrompt{}, nil, err
		}
	}
	cl, project, err := f.connect(ctx)
	if err != nil {
		return nil, prompts.ActivePrompt{}, nil, err
	}
	a, err := getByKey(ctx, cl, project, key, env)
	if err != nil {
		return nil, prompts.ActivePrompt{}, nil, err
	}
	if p.version == 0 {
		a = a.Pick(p.subject)
		if a.ActiveVersion == nil {
			return nil, a, nil, fmt.Errorf("%s has no version active in %s; prompts promote %s -version N -environment %s activates one", key, env, key, env)
		}
		return cl, a, a.ActiveVersion, nil
	}
	v, err := cl.GetVersion(ctx, a.ID, p.version)
	if errors.Is(err, prompts.ErrNotFound) {
		return nil, a, nil, fmt.Errorf("%s has no version %d", key, p.version)
	}
	if err != nil {
		return nil, a, nil, err
	}
	a.Environment = ""
	return cl, a, &v, nil
}

// given reports whether the flag name was on the command line (an empty
// value included).
func given(f *flags, name string) bool {
	found := false
	f.Visit(func(fl *flag.Flag) { found = found || fl.Name == name })
	return found
}

// getByKey reads a prompt by key with what is active in env.
func getByKey(ctx context.Context, cl *client.Client, project prompts.Project, key string, env prompts.Environment) (prompts.ActivePrompt, error) {
	if !prompts.ValidKey(key) {
		return prompts.ActivePrompt{}, fmt.Errorf("%q is not a prompt key", key)
	}
	a, err := cl.GetActiveByKey(ctx, project.ID, key, env)
	if errors.Is(err, prompts.ErrNotFound) {
		return a, fmt.Errorf("no prompt %s in project %s", key, project.Slug)
	}
	return a, err
}

// where says which version an answer is: "support/greeting  version 3
// (production)"; of a split, "support/greeting  version 4  (production,
// split 3 (90%), 4 (10%), subject "ann")".
func where(key string, v *prompts.PromptVersion, a prompts.ActivePrompt, subject string) string {
	s := key + "  version " + strconv.Itoa(v.VersionNumber)
	if a.Environment == "" {
		return s
	}
	s += "  (" + string(a.Environment)
	if len(a.Split) > 0 {
		s += ", split " + shares(a.Split)
		if subject == "" {
			s += ", no -subject: its first entry"
		}
	}
	if subject != "" {
		s += ", subject " + strconv.Quote(subject)
	}
	return s + ")"
}

func answerOf(a prompts.ActivePrompt, key string, v *prompts.PromptVersion) versionAnswer {
	ans := versionAnswer{Key: key, PromptID: a.ID}
	if a.Environment != "" {
		env := a.Environment
		ans.Environment = &env
	}
	if v != nil {
		n, id := v.VersionNumber, v.ID
		ans.Version, ans.VersionID = &n, &id
	}
	ans.Split = api.FromSplit(a.Split)
	return ans
}

// runGet prints a version's content: as it is on standard output, and
// which version it is on standard error, so that a pipe gets the content
// alone.
func runGet(ctx context.Context, e *env, args []string) int {
	f := newFlags(e, "get", true)
	var p pick
	p.flags(f)
	f.jsonFlag()
	pos, code, ok := f.parse(args, 1)
	if !ok {
		return code
	}
	key := pos[0]
	_, a, v, err := p.read(ctx, f, key)
	if err != nil {
		return e.errorf("%s", describe(err))
	}
	if f.json {
		ans := answerOf(a, key, v)
		ans.Content, ans.Metadata = &v.Content, api.Metadata(v.Metadata)
		if p.subject != "" {
			ans.Subject = &p.subject
		}
		writeJSON(e.stdout, ans)
		return exitOK
	}
	fmt.Fprintln(e.stderr, sanitize(where(key, v, a, p.subject)))
	fmt.Fprint(e.stdout, sanitizeText(v.Content))
	return exitOK
}

// vars are the values of -var NAME=VALUE and -json-var NAME=JSON, as
// given: typed once the version is known (see typed).
type vars struct {
	text map[string]string // -var
	json map[string]string // -json-var
}

// varFlag is one of the two repeatable flags, setting m.
type varFlag struct {
	v *vars
	m map[string]string
}

func (f varFlag) String() string { return "" }

func (f varFlag) Set(s string) error {
	name, value, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return fmt.Errorf("%q is not NAME=VALUE", s)
	}
	_, dup := f.v.text[name]
	if _, dupJSON := f.v.json[name]; dup || dupJSON {
		return fmt.Errorf("%s is given twice", name)
	}
	f.m[name] = value
	return nil
}

func (v *vars) given(name string) bool {
	_, text := v.text[name]
	_, js := v.json[name]
	return text || js
}

// typed returns the values to render v with. A -json-var value is JSON.
// A -var value is the string given, except for a dotprompt version
// whose input schema types the variable other than string (integer,
// number, boolean, array, object, null, or a union of these): then it is
// JSON, as -var n=3, -var on=true or -var tags='["a","b"]' give it; for
// an enum, a value that is not JSON is the string. Numbers keep their
// digits.
func (vs *vars) typed(v *prompts.PromptVersion) (map[string]any, error) {
	types := map[string]string{}
	if v.TemplateFormat.Or(prompts.FormatPlain) == prompts.FormatDotprompt {
		sig, err := prompts.VersionSignature(prompts.FormatDotprompt, v.Content, v.Metadata)
		if err != nil {
			return nil, err
		}
		for _, in := range sig.Inputs {
			name, rest, _ := strings.Cut(in, "\t")
			typ, _, _ := strings.Cut(rest, "\t")
			types[name] = typ
		}
	}
	out := make(map[string]any, len(vs.text)+len(vs.json))
	for name, value := range vs.json {
		x, err := decodeJSON(value)
		if err != nil {
			return nil, fmt.Errorf("-json-var %s: %v", name, err)
		}
		out[name] = x
	}
	for name, value := range vs.text {
		typ, typed := types[name]
		if !typed || typ == "any" || slices.Contains(strings.Split(typ, "|"), "string") {
			out[name] = value
			continue
		}
		x, err := decodeJSON(value)
		switch {
		case err != nil && typ == "enum":
			out[name] = value
		case err != nil:
			return nil, fmt.Errorf("-var %s: the input schema types %s as %s, so its value is JSON: %v", name, name, typ, err)
		default:
			out[name] = x
		}
	}
	return out, nil
}

// decodeJSON decodes one JSON value, numbers as json.Number.
func decodeJSON(s string) (any, error) {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var x any
	if err := d.Decode(&x); err != nil {
		return nil, fmt.Errorf("%q is not JSON", s)
	}
	if d.More() {
		return nil, fmt.Errorf("%q is not one JSON value", s)
	}
	return x, nil
}

// runRender prints a version rendered with its variables, as the
// server's render does, through a prompts.Renderer over the client: a
// plain version strictly (every variable needs a value, and a value for
// a name the version does not use is an error), a dotprompt version as
// Dotprompt renders it, its partials ({{> KEY}}) at the versions active
// in the environment rendered (production for -version N). It prints
// the messages, each after a line naming its role; a plain version's
// text is one user message.
func runRender(ctx context.Context, e *env, args []string) int {
	f := newFlags(e, "render", true)
	var p pick
	p.flags(f)
	values := &vars{text: map[string]string{}, json: map[string]string{}}
	f.Var(varFlag{values, values.text}, "var", "NAME=VALUE: the value of a variable (repeat it, one per variable); JSON when the version's input schema types NAME other than string (-var n=3, -var tags='[\"a\"]')")
	f.Var(varFlag{values, values.json}, "json-var", "NAME=JSON: a variable's value as JSON, whatever the schema says (a dotprompt version without one: -json-var items='[1,2]')")
	f.jsonFlag()
	pos, code, ok := f.parse(args, 1)
	if !ok {
		return code
	}
	key := pos[0]
	cl, a, v, err := p.read(ctx, f, key)
	if err != nil {
		return e.errorf("%s", describe(err))
	}
	in, err := values.typed(v)
	if err != nil {
		return e.errorf("%s: %s", where(key, v, a, p.subject), describe(err))
	}
	req := prompts.RenderRequest{PromptID: a.ID, Variables: in, Subject: p.subject}
	if a.Environment == "" {
		req.VersionNumber = prompts.Some(v.VersionNumber)
	} else {
		req.Environment = prompts.Some(a.Environment)
	}
	rv, out, err := prompts.NewRenderer(cl).Render(ctx, req)
	if err == nil {
		v = &rv // the version rendered: the active one may have changed since
	}
	if err != nil {
		var pe *prompts.Error
		if errors.As(err, &pe) && len(pe.Fields) > 0 {
			var missing, unused, wrong []string
			for _, fe := range pe.Fields {
				name, ok := strings.CutPrefix(fe.Field, "variables.")
				switch {
				case !ok:
					wrong = append(wrong, fe.Field+" "+fe.Detail)
				case strings.HasPrefix(fe.Detail, "is missing"):
					missing = append(missing, name)
				case values.given(name) && (strings.HasPrefix(fe.Detail, "is not used") || strings.HasPrefix(fe.Detail, "is not named")):
					unused = append(unused, name)
				default:
					wrong = append(wrong, name+" "+fe.Detail)
				}
			}
			var parts []string
			if len(missing) > 0 {
				parts = append(parts, "no value for "+strings.Join(missing, ", ")+" (-var NAME=VALUE)")
			}
			if len(unused) > 0 {
				parts = append(parts, "the version uses no "+strings.Join(unused, ", "))
			}
			parts = append(parts, wrong...)
			return e.errorf("%s: %s", where(key, v, a, p.subject), strings.Join(parts, "; "))
		}
		return e.errorf("%s: %s", where(key, v, a, p.subject), describe(err))
	}
	if f.json {
		ans := answerOf(a, key, v)
		if p.subject != "" {
			ans.Subject = &p.subject
		}
		ans.Text = &out.Text
		format := string(v.TemplateFormat.Or(prompts.FormatPlain))
		ans.TemplateFormat = &format
		ans.Messages = make([]renderedMessage, len(out.Messages))
		for i, m := range out.Messages {
			ans.Messages[i] = renderedMessage{Role: m.Role, Content: []renderedPart{}}
			for _, part := range m.Content {
				rp := renderedPart{}
				if part.Media != nil {
					rp.Media = &renderedMedia{URL: part.Media.URL, ContentType: part.Media.ContentType}
				} else {
					rp.Text = &part.Text
				}
				ans.Messages[i].Content = append(ans.Messages[i].Content, rp)
			}
		}
		writeJSON(e.stdout, ans)
		return exitOK
	}
	fmt.Fprintln(e.stderr, sanitize(where(key, v, a, p.subject)))
	for i, m := range out.Messages {
		if i > 0 {
			fmt.Fprintln(e.stdout)
		}
		fmt.Fprintf(e.stdout, "[%s]\n", sanitize(m.Role))
		for _, part := range m.Content {
			if part.Media != nil {
				media := "[media " + part.Media.URL
				if part.Media.ContentType != "" {
					media += " " + part.Media.ContentType
				}
				fmt.Fprintln(e.stdout, sanitize(media+"]"))
				continue
			}
			fmt.Fprint(e.stdout, sanitizeText(part.Text))
		}
		if text := lastText(m); !strings.HasSuffix(text, "\n") && text != "" {
			fmt.Fprintln(e.stdout)
		}
	}
	return exitOK
}

// lastText is the text of a message's last part ("" for media).
func lastText(m prompts.Message) string {
	if len(m.Content) == 0 || m.Content[len(m.Content)-1].Media != nil {
		return ""
	}
	return m.Content[len(m.Content)-1].Text
}

// The messages of render -json, in the shape of the server's render.
type (
	renderedMessage struct {
		Role    string         `json:"role"`
		Content []renderedPart `json:"content"`
	}
	renderedPart struct {
		Text  *string        `json:"text,omitempty"`
		Media *renderedMedia `json:"media,omitempty"`
	}
	renderedMedia struct {
		URL         string `json:"url"`
		ContentType string `json:"contentType,omitempty"`
	}
)

// change is what promote and rollback share: the environment, the
// reason and the guard.
type change struct {
	env    string
	reason string
	allow  bool
}

func (c *change) flags(f *flags) {
	f.StringVar(&c.env, "environment", "", "the environment: one of the project's, see prompts env list (required)")
	f.StringVar(&c.reason, "reason", "", "why, for the deployment record")
	f.BoolVar(&c.allow, "allow-variable-change", false, "allow a version whose variables differ from those of the version active there")
}

func (c *change) environment(f *flags) (prompts.Environment, int, bool) {
	if c.env == "" {
		return "", f.bad("-environment is required"), false
	}
	env, err := environment(c.env)
	if err != nil {
		return "", f.bad("%v", err), false
	}
	if err := (prompts.Change{Reason: c.reason}).Validate(); err != nil {
		return "", f.bad("-reason: %v", err), false
	}
	return env, 0, true
}

// runPromote makes a version the active one in an environment, or makes
// it hold a split of versions (-split), if the prompt did not change
// since it was read (a compare-and-swap).
func runPromote(ctx context.Context, e *env, args []string) int {
	f := newFlags(e, "promote", true)
	var c change
	c.flags(f)
	version := f.Int("version", 0, "the version to make active (this or -split is required)")
	splitFlag := f.String("split", "", "serve several versions, each to a share of subjects: VERSION=WEIGHT,… as 3=90,4=10 (2 to 10 versions, weights 1 to 10000; a version's share is its weight / the sum of the weights)")
	f.jsonFlag()
	pos, code, ok := f.parse(args, 1)
	if !ok {
		return code
	}
	env, code, ok := c.environment(f)
	if !ok {
		return code
	}
	var split prompts.Split
	switch {
	case *splitFlag != "" && *version != 0:
		return f.bad("give -version or -split, not both")
	case *splitFlag != "":
		var err error
		if split, err = parseSplit(*splitFlag); err != nil {
			return f.bad("%v", err)
		}
	case *version < 1:
		return f.bad("-version N (1 or more) or -split VERSION=WEIGHT,… is required")
	}
	key := pos[0]
	cl, project, err := f.connect(ctx)
	if err != nil {
		return e.errorf("%s", describe(err))
	}
	before, err := getByKey(ctx, cl, project, key, env)
	if err != nil {
		return e.errorf("%s", describe(err))
	}
	in := prompts.Activation{PromptID: before.ID, Environment: env,
		Change: prompts.Change{Reason: c.reason, AllowVariableChange: c.allow, IfRevision: before.Revision}}
	if split != nil {
		in.Split = split
	} else {
		in.VersionNumber = prompts.Some(*version)
	}
	after, err := cl.Activate(ctx, in)
	if errors.Is(err, prompts.ErrNotFound) && split != nil {
		return e.errorf("%s: a version of -split %s is not one of its versions", key, *splitFlag)
	}
	if errors.Is(err, prompts.ErrNotFound) {
		return e.errorf("%s has no version %d", key, *version)
	}
	if err != nil {
		return e.errorf("%s: %s", key, describe(err))
	}
	return e.changed(f.json, "promoted", key, before, after)
}

// runRollback makes active again the version that was active before the
// environment's latest change.
func runRollback(ctx context.Context, e *env, args []string) int {
	f := newFlags(e, "rollback", true)
	var c change
	c.flags(f)
	f.jsonFlag()
	pos, code, ok := f.parse(args, 1)
	if !ok {
		return code
	}
	env, code, ok := c.environment(f)
	if !ok {
		return code
	}
	key := pos[0]
	cl, project, err := f.connect(ctx)
	if err != nil {
		return e.errorf("%s", describe(err))
	}
	before, err := getByKey(ctx, cl, project, key, env)
	if err != nil {
		return e.errorf("%s", describe(err))
	}
	after, err := cl.Rollback(ctx, prompts.Rollback{PromptID: before.ID, Environment: env,
		Change: prompts.Change{Reason: c.reason, AllowVariableChange: c.allow, IfRevision: before.Revision}})
	if err != nil {
		return e.errorf("%s (%s): %s", key, env, describe(err))
	}
	return e.changed(f.json, "rolled back", key, before, after)
}

// changed answers a promote or a rollback. Both are compare-and-swaps
// from before's revision: the revision moved if and only if they changed
// something.
func (e *env) changed(asJSON bool, verb, key string, before, after prompts.ActivePrompt) int {
	changed := after.Revision != before.Revision
	if asJSON {
		ans := answerOf(after, key, after.ActiveVersion)
		if before.ActiveVersion != nil {
			ans.Previous = &before.ActiveVersion.VersionNumber
		}
		ans.PreviousSplit = api.FromSplit(before.Split)
		ans.Changed = &changed
		writeJSON(e.stdout, ans)
		return exitOK
	}
	was := "nothing was active there"
	if before.ActiveVersion != nil {
		was = "was " + served(before)
	}
	if !changed {
		verb, was = "unchanged", "it was active there already"
	}
	tw := newTable(e.stdout)
	row(tw, verb, key, served(after), "("+string(after.Environment)+")", was)
	tw.Flush()
	return exitOK
}

// runHistory lists a prompt's deployment records, newest first, as a
// table.
func runHistory(ctx context.Context, e *env, args []string) int {
	f := newFlags(e, "history", true)
	envName := f.String("environment", "", "only this environment's records")
	limit := f.Int("limit", 20, "at most this many records, newest first (0: all)")
	f.jsonFlag()
	pos, code, ok := f.parse(args, 1)
	if !ok {
		return code
	}
	var env prompts.Environment
	if *envName != "" {
		var err error
		if env, err = environment(*envName); err != nil {
			return f.bad("%v", err)
		}
	}
	if *limit < 0 {
		return f.bad("-limit must be 0 or more")
	}
	key := pos[0]
	cl, project, err := f.connect(ctx)
	if err != nil {
		return e.errorf("%s", describe(err))
	}
	a, err := getByKey(ctx, cl, project, key, prompts.Production)
	if err != nil {
		return e.errorf("%s", describe(err))
	}
	var records []prompts.Deployment
	filter := prompts.DeploymentFilter{PromptID: a.ID, Environment: env, Page: prompts.Page{Limit: prompts.MaxLimit}}
	for *limit == 0 || len(records) < *limit {
		if *limit > 0 {
			filter.Limit = min(prompts.MaxLimit, *limit-len(records))
		}
		page, more, err := cl.ListDeployments(ctx, filter)
		if err != nil {
			return e.errorf("%s", describe(err))
		}
		records = append(records, page...)
		if !more || len(page) == 0 {
			break
		}
		filter.After = page[len(page)-1].ID
	}
	if f.json {
		deployments := make([]api.Deployment, len(records))
		for i, d := range records {
			deployments[i] = api.FromDeployment(d)
		}
		writeJSON(e.stdout, struct {
			Key         string           `json:"key"`
			PromptID    string           `json:"prompt_id"`
			Deployments []api.Deployment `json:"deployments"`
		}{key, a.ID, deployments})
		return exitOK
	}
	if len(records) == 0 {
		fmt.Fprintf(e.stdout, "%s has no deployment yet\n", sanitize(key))
		return exitOK
	}
	tw := newTable(e.stdout)
	row(tw, "WHEN (UTC)", "ENVIRONMENT", "ACTION", "VERSION", "PREVIOUS", "ACTOR", "REASON")
	num := func(n *int) string {
		if n == nil {
			return "-"
		}
		return strconv.Itoa(*n)
	}
	str := func(s *string) string {
		if s == nil {
			return "-"
		}
		return sanitize(*s)
	}
	// A split shows as its versions with their shares: 3 (90%), 4 (10%).
	version := func(s prompts.Split, n *int) string {
		if len(s) > 0 {
			return shares(s)
		}
		return num(n)
	}
	for _, d := range records {
		row(tw, d.CreatedAt.UTC().Format("2006-01-02 15:04:05"), string(d.Environment), string(d.Action),
			version(d.Split, d.VersionNumber), version(d.PreviousSplit, d.PreviousVersionNumber), str(d.Actor), str(d.Reason))
	}
	tw.Flush()
	return exitOK
}
