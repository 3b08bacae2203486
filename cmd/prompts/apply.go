package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
	"github.com/promptkit/prompts/client"
	"github.com/promptkit/prompts/promptfile"
)

// The actions of a plan's step, one per prompt file.
const (
	actionCreate    = "create"    // the prompt is new
	actionUpdate    = "update"    // a new version, a new name or description
	actionPromote   = "promote"   // its latest version becomes active in -promote's environment
	actionUnchanged = "unchanged" // the server holds what the file does
)

// What a step changes.
const (
	changePrompt      = "prompt"      // creates the prompt
	changeName        = "name"        // updates its name
	changeDescription = "description" // updates its description
	changeTemplate    = "template"    // a new version: the template differs
	changeMetadata    = "metadata"    // a new version: the metadata differs
	changeActivation  = "activation"  // activates a version in the environment
)

// plan is what apply does, and then what it did: its JSON is the answer
// of apply -json.
type plan struct {
	Project     string               `json:"project"` // its slug
	Dir         string               `json:"dir"`
	DryRun      bool                 `json:"dry_run"`
	Environment *prompts.Environment `json:"environment"` // -promote's, or null
	Prompts     []*step              `json:"prompts"`     // one per file, by key
	ServerOnly  []serverOnly         `json:"server_only"` // the server's prompts with no file: left as they are
	Changes     int                  `json:"changes"`     // steps that change something
	Failed      int                  `json:"failed"`      // steps refused at planning or failed when applied

	order []*step // the steps in the order they are applied: a prompt's partials first
}

// serverOnly is a prompt of the server that has no file.
type serverOnly struct {
	Key           string `json:"key"`
	LatestVersion *int   `json:"latest_version"`
}

// step is what apply does for one file.
type step struct {
	Key     string   `json:"key"`
	Path    string   `json:"path"`
	Action  string   `json:"action"`
	Changes []string `json:"changes"`
	// Version is the number of the version that holds the file: the
	// latest, or the one the step creates (its number is known for sure
	// once done).
	Version int `json:"version"`
	// Previous is the latest version before the step; null when the
	// prompt has none.
	Previous *int `json:"previous_version"`
	// Environment is -promote's; WasActive the version active there
	// before the step (null when none was; a split's first entry's), and
	// WasSplit the split it held (absent when none).
	Environment *prompts.Environment `json:"environment"`
	WasActive   *int                 `json:"was_active"`
	WasSplit    []api.Share          `json:"was_split,omitempty"`
	Done        bool                 `json:"done"`            // applied
	Error       string               `json:"error,omitempty"` // why it was refused or failed

	file     promptfile.Prompt
	prompt   *prompts.Prompt        // nil: none yet
	latest   *prompts.PromptVersion // nil: none yet
	active   *prompts.ActivePrompt  // with -promote: the prompt in its environment
	newVer   bool
	promote  bool
	revision int64 // the prompt's revision when planned, for -promote's activation
}

func (s *step) changes(c ...string) { s.Changes = append(s.Changes, c...) }

// applyOptions are apply's flags.
type applyOptions struct {
	dir, promote, reason, message string
	dryRun, allow, allowPartials  bool
	env                           prompts.Environment
}

// planWorkers bounds the reads of the server that planning makes at
// once.
const planWorkers = 8

func runApply(ctx context.Context, e *env, args []string) int {
	f := newFlags(e, "apply", true)
	var o applyOptions
	f.StringVar(&o.dir, "dir", "", "the directory of prompt files: regular files of at most 1 MiB, no symbolic links")
	f.BoolVar(&o.dryRun, "dry-run", false, "print the plan and change nothing; exit 0 when nothing would change, 2 when something would")
	f.StringVar(&o.promote, "promote", "", "make every new version active in this environment (one of the project's), and the latest version of every unchanged file too")
	f.StringVar(&o.reason, "reason", "", "the reason of the deployment records that -promote writes")
	f.StringVar(&o.message, "message", "", "the change summary of every new version")
	f.BoolVar(&o.allow, "allow-variable-change", false, "let -promote activate a version whose variables differ from those of the version active there")
	f.BoolVar(&o.allowPartials, "allow-missing-partials", false, "let -promote activate a version whose partials ({{> KEY}}) have no version active there")
	f.jsonFlag()
	if _, code, ok := f.parse(args, 0); !ok {
		return code
	}
	if o.dir == "" {
		return f.bad("-dir is required")
	}
	if o.promote != "" {
		env, err := environment(o.promote)
		if err != nil {
			return f.bad("-promote: %v", err)
		}
		o.env = env
	} else if o.reason != "" || o.allow || o.allowPartials {
		return f.bad("-reason, -allow-variable-change and -allow-missing-partials go with -promote")
	}
	if err := (prompts.Change{Reason: o.reason}).Validate(); err != nil {
		return f.bad("-reason: %v", err)
	}
	if o.message != "" {
		if err := (prompts.NewVersion{PromptID: "x", Content: "x", ChangeSummary: &o.message}).Validate(); err != nil {
			return f.bad("-message: %v", err)
		}
	}

	// The files first: a broken one stops everything before any request.
	if st, err := os.Stat(o.dir); err != nil || !st.IsDir() {
		if err == nil {
			err = errors.New("not a directory")
		}
		return e.errorf("-dir %s: %v", o.dir, err)
	}
	dir, err := openPromptDir(o.dir)
	if err != nil {
		return e.errorf("-dir %s: %v", o.dir, err)
	}
	files, err := promptfile.ReadDir(dir)
	dir.Close()
	if err != nil {
		var errs []error
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			errs = j.Unwrap()
		} else {
			errs = []error{err}
		}
		for _, err := range errs {
			e.errorf("%s", withDir(o.dir, err))
		}
		return e.errorf("nothing was applied: %s cannot be read", count(len(errs), "file", "files"))
	}

	cl, project, err := f.connect(ctx)
	if err != nil {
		return e.errorf("%s", describe(err))
	}
	p, err := makePlan(ctx, cl, project, files, o)
	if err != nil {
		return e.errorf("%s", describe(err))
	}
	p.Dir = o.dir
	if !f.json {
		p.print(e.stdout)
	}
	switch {
	case p.Failed > 0:
		if f.json {
			writeJSON(e.stdout, p)
		}
		for _, s := range p.Prompts {
			if s.Error != "" {
				e.errorf("%s: %s", filepath.Join(o.dir, s.Path), s.Error)
			}
		}
		return e.errorf("nothing was applied: %s would be refused", count(p.Failed, "prompt", "prompts"))
	case o.dryRun:
		if f.json {
			writeJSON(e.stdout, p)
		} else {
			fmt.Fprintf(e.stdout, "\ndry run: %s\n", p.summary(true))
		}
		if p.Changes > 0 {
			return exitChanges
		}
		return exitOK
	}

	if !f.json && p.Changes > 0 {
		fmt.Fprintln(e.stdout)
	}
	tw := newTable(e.stdout)
	for _, s := range p.order {
		if s.Action == actionUnchanged {
			continue
		}
		if err := s.apply(ctx, cl, project, o); err != nil {
			s.Error = describe(err)
			p.Failed++
			if !f.json {
				tw.Flush()
			}
			e.errorf("%s: %s", filepath.Join(o.dir, s.Path), s.Error)
			continue
		}
		s.Done = true
		if !f.json {
			s.printResult(tw)
		}
	}
	tw.Flush()
	if f.json {
		writeJSON(e.stdout, p)
	} else {
		fmt.Fprintf(e.stdout, "\n%s\n", p.summary(false))
	}
	if p.Failed > 0 {
		return e.errorf("%s failed; run apply again: what was done is not done twice", count(p.Failed, "prompt", "prompts"))
	}
	return exitOK
}

// withDir names a file's error by its path under dir.
func withDir(dir string, err error) string {
	var pe *promptfile.Error
	if errors.As(err, &pe) && pe.Path != "" {
		c := *pe
		c.Path = filepath.Join(dir, filepath.FromSlash(pe.Path))
		return c.Error()
	}
	return err.Error()
}

// makePlan reads the server and compares each file with it.
func makePlan(ctx context.Context, cl *client.Client, project prompts.Project, files []promptfile.Prompt, o applyOptions) (*plan, error) {
	server, err := listPrompts(ctx, cl, project.ID)
	if err != nil {
		return nil, err
	}
	byKey := make(map[string]*prompts.Prompt, len(server))
	for i := range server {
		byKey[server[i].Key] = &server[i]
	}
	p := &plan{Project: project.Slug, DryRun: o.dryRun, Prompts: make([]*step, len(files)), ServerOnly: []serverOnly{}}
	if o.env != "" {
		p.Environment = &o.env
	}
	for i, file := range files {
		p.Prompts[i] = &step{Key: file.Key, Path: file.Path, file: file, prompt: byKey[file.Key], Changes: []string{}}
		delete(byKey, file.Key)
	}
	// What the server holds of each prompt, a few reads at a time.
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		next     = make(chan *step)
	)
	for range min(planWorkers, len(files)) {
		wg.Go(func() {
			for s := range next {
				if err := s.read(ctx, cl, o.env); err != nil {
					mu.Lock()
					firstErr = cmpOr(firstErr, fmt.Errorf("%s: %w", s.Key, err))
					mu.Unlock()
				}
			}
		})
	}
	for _, s := range p.Prompts {
		next <- s
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	for _, s := range p.Prompts {
		s.compare(o)
	}
	p.orderByPartials()
	for _, s := range p.Prompts {
		if s.Error != "" {
			p.Failed++
		}
		if s.Action != actionUnchanged {
			p.Changes++
		}
	}
	for _, sp := range server {
		if _, ok := byKey[sp.Key]; !ok {
			continue
		}
		so := serverOnly{Key: sp.Key}
		if sp.LatestVersionID != "" {
			v, err := latestVersion(ctx, cl, sp.ID)
			if err != nil && !errors.Is(err, errNoVersion) {
				return nil, fmt.Errorf("%s: %w", sp.Key, err)
			}
			if err == nil {
				so.LatestVersion = &v.VersionNumber
			}
		}
		p.ServerOnly = append(p.ServerOnly, so)
	}
	return p, nil
}

// orderByPartials sets the order the steps are applied in: each after
// the steps of the partials ({{> KEY}}) its file includes that are among
// the files, so that -promote activates a partial before a prompt that
// includes it (the server refuses the other order); else by key. A
// cycle of partials among the files is an error of each of its steps,
// naming it, so that nothing is applied.
func (p *plan) orderByPartials() {
	byKey := make(map[string]*step, len(p.Prompts))
	for _, s := range p.Prompts {
		byKey[s.Key] = s
	}
	const (
		onPath = 1
		done   = 2
	)
	state := map[*step]int{}
	p.order = make([]*step, 0, len(p.Prompts))
	var visit func(path []*step, s *step)
	visit = func(path []*step, s *step) {
		switch state[s] {
		case done:
			return
		case onPath:
			i := slices.Index(path, s)
			keys := make([]string, 0, len(path)-i+1)
			for _, c := range path[i:] {
				keys = append(keys, c.Key)
			}
			chain := strings.Join(append(keys, s.Key), " → ")
			for _, c := range path[i:] {
				if c.Error == "" {
					c.Error = "the partials of the files include each other: " + chain
				}
			}
			return
		}
		state[s] = onPath
		path = append(path, s)
		partials, _ := prompts.TemplatePartials(s.file.Format, s.file.Template) // a template that does not parse is refused already
		for _, key := range partials {
			if dep, ok := byKey[key]; ok {
				visit(path, dep)
			}
		}
		state[s] = done
		p.order = append(p.order, s)
	}
	for _, s := range p.Prompts {
		visit(nil, s)
	}
}

func cmpOr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// read reads what the server holds of s's prompt: its latest version,
// and with env the version active there.
func (s *step) read(ctx context.Context, cl *client.Client, env prompts.Environment) error {
	if s.prompt == nil {
		return nil
	}
	if s.prompt.LatestVersionID != "" {
		v, err := latestVersion(ctx, cl, s.prompt.ID)
		switch {
		case errors.Is(err, errNoVersion):
		case err != nil:
			return err
		default:
			s.latest = &v
		}
	}
	if env != "" {
		a, err := cl.GetActive(ctx, s.prompt.ID, env)
		if err != nil {
			return err
		}
		s.active = &a
		s.revision = a.Revision
	}
	return nil
}

// compare decides what the step does.
func (s *step) compare(o applyOptions) {
	// A file of the first releases (no prompts.format, a front matter of
	// name, description and metadata) keeps making plain versions of a
	// prompt whose latest version is plain.
	if s.latest != nil && s.latest.TemplateFormat.Or(prompts.FormatPlain) == prompts.FormatPlain {
		if plain, ok := s.file.Legacy(); ok {
			s.file.File = plain
		}
	}
	f := s.file
	if o.env != "" {
		s.Environment = &o.env
	}
	if s.prompt == nil {
		s.Action = actionCreate
		s.changes(changePrompt)
	} else {
		if f.PromptName() != s.prompt.Name {
			s.changes(changeName)
		}
		if !equalPtr(f.Description, s.prompt.Description) {
			s.changes(changeDescription)
		}
	}
	switch {
	case s.latest == nil:
		s.newVer = true
		s.Version = 1
	default:
		s.Previous = &s.latest.VersionNumber
		s.Version = s.latest.VersionNumber
		if f.Template != s.latest.Content || s.latest.TemplateFormat.Or(prompts.FormatPlain) != f.Format {
			// The same text in another format is another template.
			s.changes(changeTemplate)
			s.newVer = true
		}
		if !sameMetadata(f.File, s.latest) {
			s.changes(changeMetadata)
			s.newVer = true
		}
		if s.newVer {
			s.Version = s.latest.VersionNumber + 1
		}
	}
	// A new version is checked here as the server will check it (its
	// template and front matter), so that a refusal changes nothing at
	// all: not even the prompt is made.
	var to prompts.Signature
	if s.newVer {
		sig, err := prompts.VersionSignature(f.Format, f.Template, f.Metadata)
		if err != nil {
			s.Error = describe(err)
		}
		to = sig
	}
	// What is active: one version, or each version of a split, which
	// counts as active for its share of subjects. A split that serves the
	// latest version is left as it is (a person set it), and one that
	// does not is replaced, as a version would be.
	var active []prompts.PromptVersion
	if s.active != nil && s.active.ActiveVersion != nil {
		n := s.active.ActiveVersion.VersionNumber
		s.WasActive = &n
		s.WasSplit = api.FromSplit(s.active.Split)
		active = s.active.SplitVersions
		if len(active) == 0 {
			active = []prompts.PromptVersion{*s.active.ActiveVersion}
		}
	}
	if o.env != "" {
		switch {
		case s.newVer:
			s.changes(changeActivation)
		case !slices.ContainsFunc(active, func(v prompts.PromptVersion) bool { return v.ID == s.latest.ID }):
			s.promote = true
			s.changes(changeActivation)
		}
		// The promotion guard, against every version active, checked now
		// so that a refusal changes nothing at all.
		if (s.newVer || s.promote) && !o.allow && s.Error == "" {
			if !s.newVer {
				to = versionSignature(*s.latest)
			}
			for _, a := range active {
				if c := prompts.DiffSignatures(versionSignature(a), to); c.Changed() {
					s.Error = fmt.Sprintf("the variables would change in %s (%s): pass -allow-variable-change to allow it", o.env, describeChange(c))
					break
				}
			}
		}
	}
	switch {
	case s.Action == actionCreate:
	case s.newVer || slices.Contains(s.Changes, changeName) || slices.Contains(s.Changes, changeDescription):
		s.Action = actionUpdate
	case s.promote:
		s.Action = actionPromote
	default:
		s.Action = actionUnchanged
	}
}

func describeChange(c prompts.VariableChange) string {
	var parts []string
	if len(c.Added) > 0 {
		parts = append(parts, "added "+strings.Join(c.Added, ", "))
	}
	if len(c.Removed) > 0 {
		parts = append(parts, "removed "+strings.Join(c.Removed, ", "))
	}
	for _, in := range c.Inputs {
		parts = append(parts, in.Name+" "+in.Detail())
	}
	return strings.Join(parts, "; ")
}

// sameMetadata reports whether a file's metadata_ is the version's. A
// Dotprompt file with a front matter has the metadata_ {} at least, and
// export writes one for a dotprompt version without metadata_ whose
// prompt has a description or a name other than its key: such a file
// ({}) matches such a version (null), so that applying its own export
// makes no version.
func sameMetadata(f promptfile.File, v *prompts.PromptVersion) bool {
	if f.Format == prompts.FormatDotprompt && v.TemplateFormat.Or(prompts.FormatPlain) == prompts.FormatDotprompt &&
		v.Metadata.IsNull() && promptfile.SameMetadata(f.Metadata, "{}") {
		return true
	}
	return promptfile.SameMetadata(f.Metadata, v.Metadata)
}

func equalPtr(a, b *string) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// apply makes the step's changes: create the prompt, update it, create
// the version (active in the environment, with the reason, in one step)
// or activate the latest.
func (s *step) apply(ctx context.Context, cl *client.Client, project prompts.Project, o applyOptions) error {
	f := s.file
	if s.prompt == nil {
		in := prompts.NewPrompt{ProjectID: project.ID, Key: f.Key, Name: f.PromptName(), Description: f.Description}
		in.Idempotency = prompts.Idempotency{Key: idempotencyKey("prompt", project.ID, f.Key, in.Name, optional(in.Description))}
		p, err := cl.CreatePrompt(ctx, in)
		if err != nil {
			return err
		}
		if p.Key != f.Key {
			// A replay of a create by an earlier run, renamed since.
			return fmt.Errorf("the prompt an earlier apply created for this file is now %q; run apply again after a day, or rename it back", p.Key)
		}
		s.prompt = &p
	}
	switch {
	case s.newVer:
		in := prompts.NewVersion{PromptID: s.prompt.ID, Content: f.Template, Metadata: f.Metadata, TemplateFormat: f.Format}
		if o.message != "" {
			in.ChangeSummary = &o.message
		}
		if o.env != "" {
			in.Environments = []prompts.Environment{o.env}
			in.Reason = o.reason
			in.AllowVariableChange = o.allow
			in.AllowMissingPartials = o.allowPartials
		}
		base := ""
		if s.latest != nil {
			base = s.latest.ID
		}
		parts := []string{project.ID, f.Key, base, in.Content, string(in.Metadata.Normalize()), optional(in.ChangeSummary),
			string(o.env), in.Reason, strconv.FormatBool(in.AllowVariableChange), string(in.TemplateFormat)}
		if in.AllowMissingPartials {
			parts = append(parts, "allow_missing_partials")
		}
		in.Idempotency = prompts.Idempotency{Key: idempotencyKey("version", parts...)}
		v, err := cl.CreateVersion(ctx, in)
		if err != nil {
			return err
		}
		s.Version = v.VersionNumber
	case s.promote:
		_, err := cl.Activate(ctx, prompts.Activation{PromptID: s.prompt.ID, Environment: o.env, VersionID: prompts.Some(s.latest.ID),
			Change: prompts.Change{Reason: o.reason, AllowVariableChange: o.allow, AllowMissingPartials: o.allowPartials, IfRevision: s.revision}})
		if err != nil {
			return err
		}
	}
	// The name and description last: an update moves the prompt's
	// revision, which the promotion above compares with what the plan
	// read. When the version or the promotion fails, nothing of this file
	// was applied.
	var up prompts.PromptUpdate
	if slices.Contains(s.Changes, changeName) {
		up.Name = prompts.Some(f.PromptName())
	}
	if slices.Contains(s.Changes, changeDescription) {
		if f.Description == nil {
			up.Description = prompts.Null[string]()
		} else {
			up.Description = prompts.Some(*f.Description)
		}
	}
	if up != (prompts.PromptUpdate{}) {
		if _, err := cl.UpdatePrompt(ctx, s.prompt.ID, up); err != nil {
			return err
		}
	}
	return nil
}

// idempotencyKey derives the Idempotency-Key of a write from what names
// it (the project, the key, the version the file was compared with) and
// what it sends: a repeated run that sends the same write again is
// answered with the first one's result instead of doing it twice.
func idempotencyKey(kind string, parts ...string) string {
	h := sha256.New()
	h.Write([]byte(kind))
	for _, p := range parts {
		h.Write([]byte{0})
		h.Write([]byte(strconv.Itoa(len(p))))
		h.Write([]byte{0})
		h.Write([]byte(p))
	}
	return "prompts-apply-" + kind + "-" + hex.EncodeToString(h.Sum(nil))
}

func optional(s *string) string {
	if s == nil {
		return "\x00null"
	}
	return *s
}

// print writes the plan, one aligned line per prompt.
func (p *plan) print(w io.Writer) {
	env := ""
	if p.Environment != nil {
		env = ", promoting to " + string(*p.Environment)
	}
	fmt.Fprintf(w, "Plan for project %s, from %s%s:\n", sanitize(p.Project), sanitize(p.Dir), env)
	tw := newTable(w)
	for _, s := range p.Prompts {
		verb := s.Action
		if s.Error != "" {
			verb = "refused"
		}
		row(tw, append([]string{"  " + verb, s.Key}, s.describe()...)...)
	}
	for _, so := range p.ServerOnly {
		v := "no version"
		if so.LatestVersion != nil {
			v = "version " + strconv.Itoa(*so.LatestVersion)
		}
		row(tw, "  no file", sanitize(so.Key), v, "", "on the server only: left as it is")
	}
	tw.Flush()
}

// describe is the rest of a step's line: the version that holds the
// file, the environment when that version is (or becomes) active there,
// and what changes.
func (s *step) describe() []string {
	cells := []string{"version " + strconv.Itoa(s.Version), ""}
	if env := s.Environment; env != nil && (s.newVer || s.promote || (s.WasActive != nil && *s.WasActive == s.Version)) {
		cells[1] = "(" + string(*env) + ")"
	}
	var notes, what []string
	for _, c := range s.Changes {
		switch c {
		case changeName, changeDescription, changeTemplate, changeMetadata:
			what = append(what, c)
		}
	}
	if len(what) > 0 {
		notes = append(notes, strings.Join(what, ", ")+" changed")
	}
	if env := s.Environment; env != nil && (s.newVer || s.promote) && s.Action != actionCreate {
		if len(s.WasSplit) > 0 {
			notes = append(notes, fmt.Sprintf("%s held split %s", *env, shares(s.active.Split)))
		} else if s.WasActive != nil {
			notes = append(notes, fmt.Sprintf("%s was at version %d", *env, *s.WasActive))
		} else {
			notes = append(notes, fmt.Sprintf("nothing was active in %s", *env))
		}
	}
	if s.Error != "" {
		notes = append(notes, s.Error)
	}
	return append(cells, strings.Join(notes, "; "))
}

// printResult writes the line of a step once done.
func (s *step) printResult(w io.Writer) {
	verb := map[string]string{actionCreate: "created", actionUpdate: "updated", actionPromote: "promoted"}[s.Action]
	row(w, append([]string{verb, s.Key}, s.describe()...)...)
}

// summary counts the steps in a sentence.
func (p *plan) summary(dryRun bool) string {
	counts := map[string]int{}
	for _, s := range p.Prompts {
		if dryRun || s.Done || s.Action == actionUnchanged {
			counts[s.Action]++
		}
	}
	var parts []string
	for _, a := range []struct{ action, would, did string }{
		{actionCreate, "to create", "created"},
		{actionUpdate, "to update", "updated"},
		{actionPromote, "to promote", "promoted"},
		{actionUnchanged, "unchanged", "unchanged"},
	} {
		if n := counts[a.action]; n > 0 {
			word := a.did
			if dryRun {
				word = a.would
			}
			parts = append(parts, fmt.Sprintf("%d %s", n, word))
		}
	}
	if len(parts) == 0 && len(p.Prompts) == 0 {
		parts = append(parts, "no prompt files")
	}
	if !dryRun && p.Failed > 0 {
		parts = append(parts, fmt.Sprintf("%d failed", p.Failed))
	}
	s := strings.Join(parts, ", ")
	switch n := len(p.ServerOnly); {
	case n == 1:
		s += "; 1 on the server only, left as it is"
	case n > 1:
		s += fmt.Sprintf("; %d on the server only, left as they are", n)
	}
	if dryRun && p.Changes == 0 {
		s += "; nothing would change"
	}
	return s
}

// writeJSON writes v as indented JSON, safe for a terminal
// (escapeJSON).
func writeJSON(w io.Writer, v any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
	_, _ = w.Write(escapeJSON(b.Bytes()))
}

// escapeJSON writes, as \u escapes, the characters that encoding/json
// leaves as they are but a terminal may act upon: DEL, the C1 controls
// (U+0080 to U+009F, which some terminals take as CSI and the like) and
// every other character that is not printable (bidirectional overrides,
// for instance). The JSON means the same; only strings hold such
// characters.
func escapeJSON(b []byte) []byte {
	i := 0
	for i < len(b) {
		r, n := utf8.DecodeRune(b[i:])
		if r >= 0x7f && !strconv.IsPrint(r) {
			break
		}
		i += n
	}
	if i == len(b) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	out = append(out, b[:i]...)
	for i < len(b) {
		r, n := utf8.DecodeRune(b[i:])
		if r >= 0x7f && !strconv.IsPrint(r) && !(r == utf8.RuneError && n == 1) {
			for _, u := range utf16.Encode([]rune{r}) {
				out = fmt.Appendf(out, `\u%04x`, u)
			}
		} else {
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	return out
}

// versionSignature returns v's variables and typed inputs as the store
// computed them (in its format), or those of its content when it has no
// variables.
func versionSignature(v prompts.PromptVersion) prompts.Signature {
	sig, err := prompts.VersionSignature(v.TemplateFormat.Or(prompts.FormatPlain), v.Content, v.Metadata)
	if err != nil || v.Variables != nil {
		sig.Variables = v.Variables // as stored: the server's guard compares these
	}
	if sig.Variables == nil {
		sig.Variables = prompts.Variables(v.Content)
	}
	return sig
}
