package ui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/httpapi"
)

// formFields maps the fields of the Store's invalid-input errors to the
// form's fields.
var formFields = map[string]string{
	"content":         "content",
	"change_summary":  "change_summary",
	"metadata_":       "metadata",
	"template_format": "format",
	"reason":          "reason",
	"environment":     "environment",
	"version_number":  "version",
	"version_id":      "version",
	"split":           "split",
	"key":             "key",
	"name":            "name",
	"description":     "description",
}

// fieldErrors returns the invalid fields of err by form field, and what
// is left over for the form's summary; ok is false when err is not an
// invalid-input error.
func fieldErrors(err error) (fields map[string]string, ok bool) {
	var pe *prompts.Error
	if !errors.As(err, &pe) || pe.Code != prompts.CodeInvalid {
		return nil, false
	}
	fields = map[string]string{}
	for _, f := range pe.Fields {
		name, known := formFields[f.Field]
		msg := f.Detail
		switch member, inMetadata := strings.CutPrefix(f.Field, "metadata_."); {
		case inMetadata && (member == "model" || strings.HasPrefix(member, "model.") || strings.HasPrefix(member, "model[")):
			name = "model"
		case inMetadata && (member == "config" || strings.HasPrefix(member, "config.") || strings.HasPrefix(member, "config[")):
			name, msg = "config", "member "+member+" "+f.Detail
			if member == "config" {
				msg = f.Detail
			}
		case inMetadata:
			// A member of the metadata, such as one given twice.
			name, msg = "metadata", "member "+member+" "+f.Detail
		case !known:
			name, msg = "form", f.Field+" "+f.Detail
		}
		if fields[name] != "" {
			msg = fields[name] + "; " + msg
		}
		fields[name] = msg
	}
	return fields, true
}

// guardRefusal returns what the promotion guard's refusal names.
func guardRefusal(err error) (prompts.VariableChange, bool) {
	var pe *prompts.Error
	if !errors.As(err, &pe) || pe.Code != prompts.CodeVariablesChanged {
		return prompts.VariableChange{}, false
	}
	var vc prompts.VariableChange
	for _, f := range pe.Fields {
		name, ok := strings.CutPrefix(f.Field, "variables.")
		if !ok {
			continue
		}
		if f.Detail == "is removed" {
			vc.Removed = append(vc.Removed, name)
		} else {
			vc.Added = append(vc.Added, name)
		}
	}
	return vc, true
}

// nullable returns nil for "", else a pointer to s.
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// ----- a new prompt -----

type newPromptData struct {
	Project     prompts.Project
	Key         string
	Name        string
	Description string
	Errors      map[string]string
}

// newPromptForm is GET {prefix}projects/{project_id}/prompts/new.
func (c *call) newPromptForm() {
	p, ok := c.getProject(c.r.PathValue("project_id"))
	if !ok {
		return
	}
	c.newPromptPage(http.StatusOK, newPromptData{Project: p})
}

func (c *call) newPromptPage(status int, d newPromptData) {
	c.render(status, "newprompt", c.view("New prompt in "+d.Project.Name, d,
		crumb{Name: "Projects", URL: c.h.prefix}, crumb{Name: d.Project.Name, URL: c.h.prefix + "projects/" + d.Project.ID}, crumb{Name: "New prompt"}))
}

// createPrompt is POST {prefix}projects/{project_id}/prompts.
func (c *call) createPrompt() {
	p, ok := c.getProject(c.r.PathValue("project_id"))
	if !ok {
		return
	}
	d := newPromptData{Project: p, Key: strings.TrimSpace(c.form("key")), Name: c.form("name"), Description: c.form("description")}
	in := prompts.NewPrompt{ProjectID: p.ID, Key: d.Key, Name: d.Name, Description: nullable(d.Description)}
	pr, err := c.h.store.CreatePrompt(c.r.Context(), in)
	if fe, ok := fieldErrors(err); ok {
		d.Errors = fe
		c.newPromptPage(http.StatusBadRequest, d)
		return
	}
	if prompts.ErrorCode(err) == prompts.CodeConflict {
		d.Errors = map[string]string{"key": "is taken: another prompt of this project has this key"}
		c.newPromptPage(http.StatusConflict, d)
		return
	}
	if err != nil {
		c.storeError(err)
		return
	}
	c.flash("Prompt " + pr.Key + " created. Write its first version with New version.")
	c.redirect("prompts/" + pr.ID)
}

// flash keeps msg for the next page.
func (c *call) flash(msg string) {
	c.s.Flash = msg
	if err := c.h.save(c.r.Context(), c.sid, c.s); err != nil {
		c.h.log.Warn("ui: saving the session", "err", err)
	}
}

// redirect sends the browser to path under the prefix, to be fetched
// with GET: a reload then repeats nothing.
func (c *call) redirect(path string) {
	http.Redirect(c.w, c.r, c.h.prefix+path, http.StatusSeeOther)
}

// ----- a new version -----

type newVersionData struct {
	state
	Content   string
	Summary   string
	Format    prompts.TemplateFormat // the format chosen
	Model     string                 // metadata_.model
	Config    string                 // metadata_.config, as JSON
	Metadata  string                 // the rest of metadata_, as JSON
	Staging   bool
	Allow     bool
	Variables []string
	Errors    map[string]string
	Guard     *prompts.VariableChange
}

// Formats lists the template formats, for the form.
func (newVersionData) Formats() []prompts.TemplateFormat { return prompts.TemplateFormats }

// newVersionForm is GET {prefix}prompts/{prompt_id}/versions/new, with
// the latest version's content, format and metadata to start from.
func (c *call) newVersionForm() {
	st, ok := c.readState()
	if !ok {
		return
	}
	d := newVersionData{state: st, Format: prompts.FormatPlain}
	if st.Latest > 0 {
		v, err := c.h.store.GetVersion(c.r.Context(), st.Prompt.ID, st.Latest)
		if err != nil {
			c.storeError(err)
			return
		}
		d.Content, d.Variables = v.Content, v.Variables
		d.Format = v.TemplateFormat.Or(prompts.FormatPlain)
		d.Model, d.Config, d.Metadata = splitMetadata(v.Metadata)
	}
	c.newVersionPage(http.StatusOK, d)
}

func (c *call) newVersionPage(status int, d newVersionData) {
	c.render(status, "newversion", c.view("New version of "+d.Prompt.Key, d, c.crumbs(d.state, crumb{Name: "New version"})...))
}

// createVersion is POST {prefix}prompts/{prompt_id}/versions. The button
// "Show variables" only shows the variables of the content typed.
//
// The metadata is typed in three fields: Model (metadata_.model),
// Config (metadata_.config, a JSON object) and Metadata (the rest, a
// JSON object); each of the first two, when not empty, is merged into
// the rest, which must not give it too.
func (c *call) createVersion() {
	st, ok := c.readState()
	if !ok {
		return
	}
	d := newVersionData{
		state:    st,
		Content:  c.form("content"),
		Summary:  c.form("change_summary"),
		Format:   prompts.TemplateFormat(c.form("template_format")),
		Model:    strings.TrimSpace(c.form("model")),
		Config:   strings.TrimSpace(c.form("config")),
		Metadata: strings.TrimSpace(c.form("metadata")),
		Staging:  c.r.PostForm.Get("staging") != "",
		Allow:    c.r.PostForm.Get("allow_variable_change") != "",
		Errors:   map[string]string{},
	}
	format := d.Format
	if format == "" {
		// What the Store takes: the latest version's format.
		format = prompts.FormatPlain
		if st.Latest > 0 {
			v, err := c.h.store.GetVersion(c.r.Context(), st.Prompt.ID, st.Latest)
			if err != nil {
				c.storeError(err)
				return
			}
			format = v.TemplateFormat.Or(prompts.FormatPlain)
		}
	}
	vars, err := prompts.TemplateVariables(format, d.Content)
	if fe, ok := fieldErrors(err); ok && c.r.PostForm.Get("preview") != "" {
		d.Errors = fe
		c.newVersionPage(http.StatusBadRequest, d)
		return
	}
	d.Variables = vars
	if c.r.PostForm.Get("preview") != "" {
		c.newVersionPage(http.StatusOK, d)
		return
	}
	meta, errs := mergeMetadata(d.Model, d.Config, d.Metadata)
	if len(errs) > 0 {
		d.Errors = errs
		c.newVersionPage(http.StatusBadRequest, d)
		return
	}
	in := prompts.NewVersion{
		PromptID:       st.Prompt.ID,
		Content:        d.Content,
		ChangeSummary:  nullable(d.Summary),
		Metadata:       meta,
		TemplateFormat: d.Format,
		Actor:          c.access.Name,
	}
	if d.Staging {
		// Activating needs deploy, as over the HTTP interface.
		if !allows(c.access.Role, httpapi.RoleDeploy) {
			c.forbidden(httpapi.RoleDeploy)
			return
		}
		in.Environments = []prompts.Environment{prompts.Staging}
		in.AllowVariableChange = d.Allow
		in.AllowProtected = allows(c.access.Role, httpapi.RoleAdmin) // a protected staging needs admin
	}
	v, err := c.h.store.CreateVersion(c.r.Context(), in)
	if fe, ok := fieldErrors(err); ok {
		// An error of model or config belongs to the field it was typed
		// in: its own, or the rest's JSON.
		if d.Model == "" && fe["model"] != "" {
			fe["metadata"] = joinErr(fe["metadata"], "member model "+fe["model"])
			delete(fe, "model")
		}
		if d.Config == "" && fe["config"] != "" {
			msg := fe["config"]
			if !strings.HasPrefix(msg, "member ") {
				msg = "member config " + msg
			}
			fe["metadata"] = joinErr(fe["metadata"], msg)
			delete(fe, "config")
		}
		d.Errors = fe
		c.newVersionPage(http.StatusBadRequest, d)
		return
	}
	if vc, ok := guardRefusal(err); ok {
		d.Guard = &vc
		c.newVersionPage(http.StatusConflict, d)
		return
	}
	if err != nil {
		c.storeError(err)
		return
	}
	msg := fmt.Sprintf("Version %d created.", v.VersionNumber)
	if d.Staging {
		msg = fmt.Sprintf("Version %d created and active in staging.", v.VersionNumber)
	}
	c.flash(msg)
	c.redirect("prompts/" + st.Prompt.ID + "/versions/" + strconv.Itoa(v.VersionNumber))
}

// splitMetadata splits m for the new version's form: its model (when a
// string), its config (when an object, indented), and the rest,
// indented, in their order.
func splitMetadata(m prompts.Metadata) (model, config, rest string) {
	if m.IsNull() {
		return "", "", ""
	}
	ms, err := members(string(m))
	if err != nil {
		return "", "", prettyMetadata(m)
	}
	var others []member
	for _, x := range ms {
		switch {
		case x.Key == "model" && model == "" && json.Unmarshal(x.Raw, &model) == nil && model != "":
		case x.Key == "config" && config == "" && x.Composite() && bytes.HasPrefix(bytes.TrimSpace(x.Raw), []byte("{")):
			config = prettyJSON(x.Raw)
		default:
			others = append(others, x)
		}
	}
	if len(others) == 0 {
		return model, config, ""
	}
	return model, config, prettyJSON(joinMembers(others))
}

// joinMembers makes an object of ms, in their order.
func joinMembers(ms []member) []byte {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, x := range ms {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(quoteJSON(x.Key))
		buf.WriteByte(':')
		buf.Write(x.Raw)
	}
	buf.WriteByte('}')
	return buf.Bytes()
}

func quoteJSON(s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// mergeMetadata makes metadata_ of the form's three fields: model and
// config go first, then the rest as typed (so its digits, and anything
// the Store refuses in it, reach the Store as they are). Errors are by
// form field.
func mergeMetadata(model, config, rest string) (prompts.Metadata, map[string]string) {
	if model == "" && config == "" {
		return prompts.Metadata(rest), nil // the Store checks it
	}
	errs := map[string]string{}
	var restMembers []member
	if rest != "" && rest != "null" {
		ms, err := members(rest)
		if err != nil {
			errs["metadata"] = err.Error()
		}
		restMembers = ms
	}
	for _, x := range restMembers {
		if x.Key == "model" && model != "" {
			errs["model"] = "is given twice: here and in Metadata (JSON); remove one"
		}
		if x.Key == "config" && config != "" {
			errs["config"] = "is given twice: here and in Metadata (JSON); remove one"
		}
	}
	var head []member
	if model != "" {
		head = append(head, member{Key: "model", Raw: quoteJSON(model)})
	}
	if config != "" {
		if _, err := members(config); err != nil {
			errs["config"] = err.Error()
		}
		head = append(head, member{Key: "config", Raw: json.RawMessage(config)})
	}
	if len(errs) > 0 {
		return "", errs
	}
	out := joinMembers(head)
	if len(restMembers) > 0 {
		r := strings.TrimSpace(rest)
		out = append(append(out[:len(out)-1], ','), r[1:]...)
	}
	return prompts.Metadata(out), nil
}

// ----- promote, roll back, deactivate -----

// changeData is the form of a change of an environment. Revision,
// SeenLatest and SeenDeployment are what the form was rendered from: the
// revision the change expects, and what the page had seen, to say what
// changed when the revision is stale.
type changeData struct {
	state
	Choices        []prompts.PromptVersion // promote: the versions, newest first
	Version        int
	Env            prompts.Environment
	Reason         string
	Allow          bool
	Revision       int64
	SeenLatest     int
	SeenDeployment string
	Errors         map[string]string
	Stale          []string // not nil: the page was stale; what changed
	Guard          *prompts.VariableChange
	Refused        string // another refusal, said as is
	Rollbacks      []rollbackTarget

	// promote: the form of a split (?split=1) rather than of one version,
	// and its rows.
	SplitForm bool
	Rows      []splitRow
}

// rollbackTarget says what rolling an environment back would do.
type rollbackTarget struct {
	Env      prompts.Environment
	From, To *int                // To nil: nothing to roll back to
	Last     *prompts.Deployment // the change a rollback undoes
}

// Back and Now say what a rollback returns to and leaves, for people.
func (rt rollbackTarget) Back() string {
	if rt.Last == nil {
		return ""
	}
	return served(rt.Last.PreviousSplit, rt.To, "")
}

func (rt rollbackTarget) Now() string {
	if rt.Last == nil {
		return "nothing active"
	}
	return served(rt.Last.Split, rt.From, "nothing active")
}

// changeForm reads the prompt's state and the form's defaults.
func (c *call) changeForm() (changeData, bool) {
	st, ok := c.readState()
	if !ok {
		return changeData{}, false
	}
	var d changeData
	d.refresh(st)
	return d, true
}

// refresh makes d show the prompt as st has it, and expect its revision:
// after a stale page, the form is offered again as it now stands.
func (d *changeData) refresh(st state) {
	d.state = st
	d.Revision, d.SeenLatest, d.SeenDeployment = st.Prompt.Revision, st.Latest, st.LastSeen
	d.Rollbacks = d.Rollbacks[:0]
	for _, es := range st.Envs {
		rt := rollbackTarget{Env: es.Env}
		if es.Last != nil {
			rt.From, rt.To, rt.Last = es.Last.VersionNumber, es.Last.PreviousVersionNumber, es.Last
		}
		d.Rollbacks = append(d.Rollbacks, rt)
	}
}

// promoteForm is GET {prefix}prompts/{prompt_id}/promote?version=&environment=.
// Without them it offers what is in staging for production, or else the
// latest version for staging.
func (c *call) promoteForm() {
	d, ok := c.changeForm()
	if !ok {
		return
	}
	if !c.choices(&d) {
		return
	}
	q := c.r.URL.Query()
	status := http.StatusOK
	if v := q.Get("version"); v != "" {
		var err error
		if d.Version, err = strconv.Atoi(v); err != nil {
			status, d.Errors = http.StatusBadRequest, map[string]string{"version": "must be a number"}
		}
	}
	d.Env = prompts.Environment(q.Get("environment"))
	d.SplitForm = q.Get("split") == "1"
	staging, production := d.env(prompts.Staging).Version, d.env(prompts.Production).Version
	if d.Version == 0 {
		d.Version = d.Latest
		if staging != nil && (production == nil || production.ID != staging.ID) {
			d.Version = staging.VersionNumber
		}
	}
	if !d.Env.Valid() {
		d.Env = prompts.Staging
		if staging != nil && staging.VersionNumber == d.Version {
			d.Env = prompts.Production
		}
	}
	if d.SplitForm {
		d.Rows = splitRows(defaultSplit(d.env(d.Env), d.Version))
	}
	c.changePage(status, "promote", d)
}

// defaultSplit is the split the form offers for es: the one it holds;
// else, when it serves a version other than the one offered, that
// version at 90 and the one offered at 10 (a canary); else none.
func defaultSplit(es envState, offered int) []splitRow {
	switch {
	case es.Split != nil:
		return rowsOf(es.Split)
	case es.Version != nil && offered > 0 && es.Version.VersionNumber != offered:
		return []splitRow{{Version: es.Version.VersionNumber, Weight: "90"}, {Version: offered, Weight: "10"}}
	}
	return nil
}

// choices reads the versions the promote form offers.
func (c *call) choices(d *changeData) bool {
	vs, _, err := c.h.store.ListVersions(c.r.Context(), d.Prompt.ID, prompts.Page{Limit: prompts.MaxLimit})
	if err != nil {
		c.storeError(err)
		return false
	}
	d.Choices = vs
	return true
}

var changeTitles = map[string]string{"promote": "Promote", "rollback": "Roll back", "deactivate": "Deactivate"}

func (c *call) changePage(status int, page string, d changeData) {
	title := changeTitles[page]
	c.render(status, page, c.view(title+" "+d.Prompt.Key, d, c.crumbs(d.state, crumb{Name: title})...))
}

// readChange reads the fields every change form has. It answers 400 for
// a form without a revision: a change is always a compare-and-swap.
func (c *call) readChange(page string) (changeData, prompts.Change, bool) {
	d, ok := c.changeForm()
	if !ok {
		return d, prompts.Change{}, false
	}
	d.Env = prompts.Environment(c.r.PostForm.Get("environment"))
	d.Reason = c.form("reason")
	d.Allow = c.r.PostForm.Get("allow_variable_change") != ""
	rev, err := strconv.ParseInt(c.r.PostForm.Get("revision"), 10, 64)
	if err != nil || rev < 1 {
		c.fail(http.StatusBadRequest, errorData{Title: "Invalid form", Message: "The form does not say which revision of the prompt it was made from. Nothing was changed. Reload the page and try again.", Back: c.h.prefix + "prompts/" + d.Prompt.ID + "/" + page, BackTo: "Back to the form"})
		return d, prompts.Change{}, false
	}
	d.Revision = rev
	d.SeenLatest, _ = strconv.Atoi(c.r.PostForm.Get("seen_latest"))
	d.SeenDeployment = c.r.PostForm.Get("seen_deployment")
	return d, prompts.Change{Actor: c.access.Name, Reason: d.Reason, IfRevision: rev, AllowVariableChange: d.Allow,
		AllowProtected: allows(c.access.Role, httpapi.RoleAdmin)}, true
}

// changeFailed answers a refused change: the form again, with the
// status the HTTP interface gives, saying why. It reports whether err
// was one of those.
func (c *call) changeFailed(page string, d changeData, err error) bool {
	if fe, ok := fieldErrors(err); ok {
		d.Errors = fe
		c.changePage(http.StatusBadRequest, page, d)
		return true
	}
	if vc, ok := guardRefusal(err); ok {
		d.Guard = &vc
		c.changePage(http.StatusConflict, page, d)
		return true
	}
	switch prompts.ErrorCode(err) {
	case prompts.CodePreconditionFailed:
		d.Stale = c.whatChanged(d)
		if d.Stale == nil {
			d.Stale = []string{}
		}
		d.refresh(d.state) // d.state was read at this request: the prompt as it is now
		c.changePage(http.StatusPreconditionFailed, page, d)
		return true
	case prompts.CodeConflict:
		var pe *prompts.Error
		errors.As(err, &pe)
		d.Refused = pe.Message
		c.changePage(http.StatusConflict, page, d)
		return true
	case prompts.CodeForbidden: // a protected environment
		var pe *prompts.Error
		errors.As(err, &pe)
		d.Refused = pe.Message
		c.changePage(http.StatusForbidden, page, d)
		return true
	}
	return false
}

// whatChanged says what changed between what the stale page had seen
// and the prompt as it is now (d.state).
func (c *call) whatChanged(d changeData) []string {
	var out []string
	switch n := d.Latest - d.SeenLatest; {
	case d.SeenLatest < 1 && d.Latest > 0 && n > 1:
		out = append(out, fmt.Sprintf("Versions 1 to %d were created.", d.Latest))
	case n == 1:
		out = append(out, fmt.Sprintf("Version %d was created.", d.Latest))
	case n > 1:
		out = append(out, fmt.Sprintf("Versions %d to %d were created.", d.SeenLatest+1, d.Latest))
	}
	ds, _, err := c.h.store.ListDeployments(c.r.Context(), prompts.DeploymentFilter{PromptID: d.Prompt.ID, Page: prompts.Page{Limit: 20}})
	if err != nil {
		c.h.log.Warn("ui: reading what changed", "err", err)
	}
	for _, dep := range ds {
		if dep.ID <= d.SeenDeployment {
			break
		}
		out = append(out, describeDeployment(dep))
	}
	if len(out) == 0 {
		out = append(out, "The prompt's key, name or description changed.")
	}
	return out
}

// describeDeployment says what a record did, for people.
func describeDeployment(d prompts.Deployment) string {
	var b strings.Builder
	b.WriteString(string(d.Environment) + ": ")
	switch {
	case d.Action == prompts.ActionDeactivate || d.VersionNumber == nil:
		b.WriteString("deactivated")
	case d.Action == prompts.ActionRollback:
		b.WriteString("rolled back to " + served(d.Split, d.VersionNumber, ""))
	case len(d.Split) > 0:
		b.WriteString("split between " + splitText(d.Split))
	default:
		b.WriteString("version " + strconv.Itoa(*d.VersionNumber) + " activated")
	}
	if d.PreviousVersionNumber != nil {
		b.WriteString(" (was " + served(d.PreviousSplit, d.PreviousVersionNumber, "") + ")")
	}
	b.WriteString(", " + d.CreatedAt.UTC().Format("2006-01-02 15:04 UTC"))
	if d.Actor != nil {
		b.WriteString(", by " + *d.Actor)
	}
	if d.Reason != nil {
		b.WriteString(": “" + *d.Reason + "”")
	}
	return b.String() + "."
}

// promote is POST {prefix}prompts/{prompt_id}/promote: one version, or
// a split with serve=split.
func (c *call) promote() {
	d, ch, ok := c.readChange("promote")
	if !ok {
		return
	}
	if !c.choices(&d) {
		return
	}
	if c.r.PostForm.Get("serve") == "split" {
		c.promoteSplit(d, ch)
		return
	}
	var err error
	if d.Version, err = strconv.Atoi(c.r.PostForm.Get("version")); err != nil {
		d.Errors = map[string]string{"version": "must be a number"}
		c.changePage(http.StatusBadRequest, "promote", d)
		return
	}
	in := prompts.Activation{PromptID: d.Prompt.ID, Environment: d.Env, VersionNumber: prompts.Some(d.Version), Change: ch}
	ap, err := c.h.store.Activate(c.r.Context(), in)
	if err != nil {
		if !c.changeFailed("promote", d, err) {
			c.storeError(err)
		}
		return
	}
	if ap.Revision == d.Revision {
		c.flash(fmt.Sprintf("Version %d was active in %s already; nothing changed.", d.Version, d.Env))
	} else {
		c.flash(fmt.Sprintf("Version %d is active in %s now.", d.Version, d.Env))
	}
	c.redirect("prompts/" + d.Prompt.ID)
}

// promoteSplit makes the environment hold the split of the form's rows
// (split.N.version, split.N.weight). With add_entry, it offers the form
// again with one more row, and changes nothing. A row with a version
// and no weight, or a weight and no version, is 400 naming the row, as
// is a split the Store refuses (naming the row of the entry at fault).
func (c *call) promoteSplit(d changeData, ch prompts.Change) {
	d.SplitForm = true
	rows, problems, shown := c.readSplitRows()
	d.Rows = splitRows(rows)
	if c.r.PostForm.Get("add_entry") != "" {
		if n := min(shown+1, prompts.MaxSplitVersions); n > len(d.Rows) {
			d.Rows = append(d.Rows, make([]splitRow, n-len(d.Rows))...)
		}
		c.changePage(http.StatusOK, "promote", d)
		return
	}
	if len(problems) > 0 {
		d.Errors = map[string]string{"split": strings.Join(problems, "; ")}
		c.changePage(http.StatusBadRequest, "promote", d)
		return
	}
	split, from := splitOf(rows)
	in := prompts.Activation{PromptID: d.Prompt.ID, Environment: d.Env, Split: split, Change: ch}
	ap, err := c.h.store.Activate(c.r.Context(), in)
	if err != nil {
		if fe, ok := splitErrors(err, from); ok {
			d.Errors = fe
			c.changePage(http.StatusBadRequest, "promote", d)
			return
		}
		if prompts.ErrorCode(err) == prompts.CodeNotFound {
			d.Errors = map[string]string{"split": "names a version this prompt does not have"}
			c.changePage(http.StatusNotFound, "promote", d)
			return
		}
		if !c.changeFailed("promote", d, err) {
			c.storeError(err)
		}
		return
	}
	if ap.Revision == d.Revision {
		c.flash(fmt.Sprintf("This split was active in %s already; nothing changed.", d.Env))
	} else {
		c.flash(fmt.Sprintf("A split is active in %s now: %s, each to its share of subjects.", d.Env, splitText(ap.Split)))
	}
	c.redirect("prompts/" + d.Prompt.ID)
}

// splitErrors returns the Store's invalid-input error of a split by form
// field, an entry's field named by the form's row (from[i] is entry i's
// row); ok is false when err is not an invalid-input error.
func splitErrors(err error, from []int) (map[string]string, bool) {
	var pe *prompts.Error
	if !errors.As(err, &pe) || pe.Code != prompts.CodeInvalid {
		return nil, false
	}
	fe := map[string]string{}
	for _, f := range pe.Fields {
		name, msg := "form", f.Field+" "+f.Detail
		if known, ok := formFields[f.Field]; ok {
			name, msg = known, f.Detail
		}
		if rest, ok := strings.CutPrefix(f.Field, "split["); ok {
			i, field, _ := strings.Cut(rest, "].")
			if n, err := strconv.Atoi(i); err == nil && n >= 0 && n < len(from) {
				if field != "weight" {
					field = "version"
				}
				name, msg = "split", fmt.Sprintf("entry %d: the %s %s", from[n], field, f.Detail)
			}
		}
		fe[name] = joinErr(fe[name], msg)
	}
	return fe, true
}

// rollbackForm is GET {prefix}prompts/{prompt_id}/rollback?environment=.
func (c *call) rollbackForm() { c.envForm("rollback", prompts.Production) }

// deactivateForm is GET {prefix}prompts/{prompt_id}/deactivate?environment=.
func (c *call) deactivateForm() { c.envForm("deactivate", prompts.Staging) }

// envForm is the form of a change of one environment (page), for the
// environment the query names, else def.
func (c *call) envForm(page string, def prompts.Environment) {
	d, ok := c.changeForm()
	if !ok {
		return
	}
	d.Env = prompts.Environment(c.r.URL.Query().Get("environment"))
	if !d.Env.Valid() {
		d.Env = def
	}
	c.changePage(http.StatusOK, page, d)
}

// rollback is POST {prefix}prompts/{prompt_id}/rollback.
func (c *call) rollback() {
	d, ch, ok := c.readChange("rollback")
	if !ok {
		return
	}
	ap, err := c.h.store.Rollback(c.r.Context(), prompts.Rollback{PromptID: d.Prompt.ID, Environment: d.Env, Change: ch})
	if err != nil {
		if !c.changeFailed("rollback", d, err) {
			c.storeError(err)
		}
		return
	}
	if ap.ActiveVersion != nil && ap.Split != nil {
		c.flash(fmt.Sprintf("Rolled back: %s are active in %s now.", splitText(ap.Split), d.Env))
	} else if ap.ActiveVersion != nil {
		c.flash(fmt.Sprintf("Rolled back: version %d is active in %s now.", ap.ActiveVersion.VersionNumber, d.Env))
	} else {
		c.flash(fmt.Sprintf("Rolled back: nothing is active in %s now.", d.Env))
	}
	c.redirect("prompts/" + d.Prompt.ID)
}

// deactivate is POST {prefix}prompts/{prompt_id}/deactivate.
func (c *call) deactivate() {
	d, ch, ok := c.readChange("deactivate")
	if !ok {
		return
	}
	ap, err := c.h.store.Deactivate(c.r.Context(), prompts.Deactivation{PromptID: d.Prompt.ID, Environment: d.Env, Change: ch})
	if err != nil {
		if !c.changeFailed("deactivate", d, err) {
			c.storeError(err)
		}
		return
	}
	if ap.Revision == d.Revision {
		c.flash(fmt.Sprintf("Nothing was active in %s; nothing changed.", d.Env))
	} else {
		c.flash(fmt.Sprintf("Deactivated: nothing is active in %s now.", d.Env))
	}
	c.redirect("prompts/" + d.Prompt.ID)
}

// ----- render -----

type renderData struct {
	state
	Version prompts.PromptVersion
	Values  map[string]string
	Text    *string
	Error   string
	// Subject is who the render is for, optional: the page says which
	// version each environment that holds a split serves it (Serves), and
	// a dotprompt version's partials are read for it.
	Subject string
	Serves  []subjectServe

	// A dotprompt version: a field per variable, read as JSON or as
	// text; history and context as JSON; the result as messages, with
	// the front matter's model, config and output beside.
	Dotprompt bool
	Fields    []valueField
	History   string
	Context   string
	Errors    map[string]string // "history", "context", "form"
	Front     frontMatter
	Messages  []prompts.Message
	Rendered  bool
}

// subjectServe is the version an environment's split serves the render
// page's subject.
type subjectServe struct {
	Env     prompts.Environment
	Version int
	URL     string // its render page, for the subject
}

// forSubject sets the subject of d, and what each environment that
// holds a split serves it.
func (c *call) forSubject(d *renderData, subject string) {
	d.Subject, d.Serves = subject, nil
	if subject == "" {
		return
	}
	for _, es := range d.Envs {
		if i := es.Split.Entry(d.Prompt.ID, es.Env, subject); i >= 0 {
			n := es.Split[i].VersionNumber
			d.Serves = append(d.Serves, subjectServe{Env: es.Env, Version: n,
				URL: c.h.prefix + "prompts/" + d.Prompt.ID + "/versions/" + strconv.Itoa(n) + "/render?subject=" + url.QueryEscape(subject)})
		}
	}
}

// valueField is the field of one variable of a dotprompt version.
type valueField struct {
	Name  string
	Value string
	JSON  bool   // read as JSON (else as text)
	Help  string // its type, whether required, its description
	Error string
}

// renderForm is GET {prefix}prompts/{prompt_id}/versions/{number}/render.
func (c *call) renderForm() {
	st, ok := c.readState()
	if !ok {
		return
	}
	v, ok := c.getVersion(st.Prompt.ID, c.r.PathValue("number"))
	if !ok {
		return
	}
	d := renderData{state: st, Version: v, Values: map[string]string{}}
	c.forSubject(&d, c.r.URL.Query().Get("subject"))
	if isFormat(v, "dotprompt") {
		d.Dotprompt, d.Front = true, readFrontMatter(v.Metadata)
		d.Fields = defaultFields(v, d.Front)
	}
	c.renderPage(http.StatusOK, d)
}

// defaultFields are the fields of v's variables before anything is
// typed: each holds its input.default, and is read as text when its
// schema says it is a string (or, without a schema, when its default is
// a string or it has none), else as JSON.
func defaultFields(v prompts.PromptVersion, fm frontMatter) []valueField {
	fs := make([]valueField, 0, len(v.Variables))
	for _, name := range v.Variables {
		f := valueField{Name: name, Help: fieldHelp(fm, name)}
		def, hasDef := fm.defaults[name]
		if p, ok := fm.props[name]; ok {
			f.JSON = p.Type != "string" && p.Type != "string or null"
		} else if hasDef {
			_, isString := def.(string)
			f.JSON = !isString
		}
		if hasDef {
			if s, ok := def.(string); ok && !f.JSON {
				f.Value = s
			} else if b, err := json.Marshal(def); err == nil {
				f.Value = string(b)
			}
		}
		fs = append(fs, f)
	}
	return fs
}

// fieldHelp says what the input schema says of the variable name.
func fieldHelp(fm frontMatter, name string) string {
	p, ok := fm.props[name]
	if !ok {
		return ""
	}
	help := p.Type
	if p.Required {
		help += ", required"
	} else {
		help += ", optional"
	}
	if p.Description != "" {
		help += ": " + p.Description
	}
	return help
}

func (c *call) renderPage(status int, d renderData) {
	n := strconv.Itoa(d.Version.VersionNumber)
	c.render(status, "render", c.view("Render version "+n+" of "+d.Prompt.Key, d,
		c.crumbs(d.state, crumb{Name: "Version " + n, URL: c.h.prefix + "prompts/" + d.Prompt.ID + "/versions/" + n}, crumb{Name: "Render"})...))
}

// renderVersion is POST {prefix}prompts/{prompt_id}/versions/{number}/render:
// the version rendered strictly with the values typed (a field per
// variable, named var.NAME). It changes nothing.
func (c *call) renderVersion() {
	st, ok := c.readState()
	if !ok {
		return
	}
	v, ok := c.getVersion(st.Prompt.ID, c.r.PathValue("number"))
	if !ok {
		return
	}
	if isFormat(v, "dotprompt") {
		c.renderChat(st, v)
		return
	}
	d := renderData{state: st, Version: v, Values: map[string]string{}}
	c.forSubject(&d, c.form("subject"))
	for name := range c.r.PostForm {
		if n, ok := strings.CutPrefix(name, "var."); ok {
			d.Values[n] = c.form(name)
		}
	}
	text, err := v.Render(d.Values)
	if err != nil {
		d.Error = errorText(err)
		c.renderPage(http.StatusBadRequest, d)
		return
	}
	d.Text = &text
	c.renderPage(http.StatusOK, d)
}

// renderChat renders a dotprompt version with the values typed: var.NAME
// is read as JSON, or as text when kind.NAME is "text"; an empty JSON
// field gives no value (its input.default applies, if it has one); an
// empty text field is the empty string. history (a JSON array of
// messages) and context (a JSON object, Dotprompt's @ data) are
// optional. A value that is not JSON is 400, naming its field, and
// nothing is rendered.
func (c *call) renderChat(st state, v prompts.PromptVersion) {
	d := renderData{state: st, Version: v, Dotprompt: true, Front: readFrontMatter(v.Metadata), Errors: map[string]string{}}
	c.forSubject(&d, c.form("subject"))
	d.History = strings.TrimSpace(c.form("history"))
	d.Context = strings.TrimSpace(c.form("context"))
	values := map[string]any{}
	for name, val := range d.Front.defaults {
		if slices.Contains(v.Variables, name) {
			values[name] = val
		}
	}
	bad := false
	for _, name := range v.Variables {
		f := valueField{Name: name, Help: fieldHelp(d.Front, name), Value: c.form("var." + name), JSON: c.form("kind."+name) != "text"}
		switch {
		case !f.JSON:
			values[name] = f.Value
		case strings.TrimSpace(f.Value) != "":
			x, err := parseValue(f.Value)
			if err != nil {
				f.Error, bad = err.Error()+". To give it as text, choose Text.", true
				break
			}
			values[name] = x
		}
		d.Fields = append(d.Fields, f)
	}
	for name := range c.r.PostForm {
		if n, ok := strings.CutPrefix(name, "var."); ok && !slices.Contains(v.Variables, n) {
			d.Errors["form"] = joinErr(d.Errors["form"], n+" is not a variable of this version")
			bad = true
		}
	}
	in := prompts.RenderInput{Values: values, AllowUnused: true}
	if d.History != "" {
		h, err := parseHistory(d.History)
		if err != nil {
			d.Errors["history"], bad = err.Error(), true
		}
		in.History = h
	}
	if d.Context != "" {
		x, err := parseValue(d.Context)
		m, isObject := x.(map[string]any)
		switch {
		case err != nil:
			d.Errors["context"], bad = err.Error(), true
		case !isObject:
			d.Errors["context"], bad = "must be a JSON object, such as {\"state\": {\"step\": 2}}", true
		}
		in.Context = m
	}
	if bad {
		c.renderPage(http.StatusBadRequest, d)
		return
	}
	if in.Values == nil {
		in.Values = map[string]any{}
	}
	// By number: partials at their versions active in production (for
	// the subject, where production holds a split of one).
	_, r, err := c.h.render.Render(c.r.Context(), prompts.RenderRequest{PromptID: v.PromptID, VersionNumber: prompts.Some(v.VersionNumber),
		Variables: in.Values, Context: in.Context, History: in.History, AllowUnused: in.AllowUnused, Subject: d.Subject})
	if err != nil {
		var pe *prompts.Error
		if !errors.As(err, &pe) || pe.Code != prompts.CodeInvalid {
			c.storeError(err)
			return
		}
		for _, fe := range pe.Fields {
			name, isVar := strings.CutPrefix(fe.Field, "variables.")
			i := slices.IndexFunc(d.Fields, func(f valueField) bool { return f.Name == name })
			switch {
			case isVar && i >= 0:
				d.Fields[i].Error = joinErr(d.Fields[i].Error, fe.Detail)
			case strings.HasPrefix(fe.Field, "history"):
				d.Errors["history"] = joinErr(d.Errors["history"], fe.Field+" "+fe.Detail)
			default:
				d.Errors["form"] = joinErr(d.Errors["form"], strings.TrimPrefix(fe.Field, "variables.")+" "+fe.Detail)
			}
		}
		c.renderPage(http.StatusBadRequest, d)
		return
	}
	d.Messages, d.Rendered = r.Messages, true
	c.renderPage(http.StatusOK, d)
}

// FieldErrors lists the fields in error, for the form's summary.
func (d renderData) FieldErrors() []string {
	var out []string
	for _, f := range d.Fields {
		if f.Error != "" {
			out = append(out, f.Name+": "+f.Error)
		}
	}
	for _, k := range []string{"history", "context", "form"} {
		if e := d.Errors[k]; e != "" {
			if k != "form" {
				e = fieldLabels[k] + " " + e
			}
			out = append(out, e)
		}
	}
	return out
}

func joinErr(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// parseHistory reads messages in Dotprompt's shape, as the HTTP
// interface takes them: [{"role": "user", "content": [{"text": "…"} or
// {"media": {"url": "…", "contentType": "…"}}]}].
func parseHistory(text string) ([]prompts.Message, error) {
	var raw []struct {
		Role    string `json:"role"`
		Content []struct {
			Text  *string `json:"text"`
			Media *struct {
				URL         string `json:"url"`
				ContentType string `json:"contentType"`
			} `json:"media"`
		} `json:"content"`
	}
	if _, err := parseValue(text); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf(`must be an array of messages, such as [{"role": "user", "content": [{"text": "Hi"}]}]: %s`, strings.TrimPrefix(err.Error(), "json: "))
	}
	out := make([]prompts.Message, 0, len(raw))
	for i, m := range raw {
		msg := prompts.Message{Role: m.Role, Content: []prompts.Part{}}
		for j, p := range m.Content {
			switch {
			case p.Media != nil && p.Text == nil:
				msg.Content = append(msg.Content, prompts.Part{Media: &prompts.Media{URL: p.Media.URL, ContentType: p.Media.ContentType}})
			case p.Text != nil && p.Media == nil:
				msg.Content = append(msg.Content, prompts.Part{Text: *p.Text})
			default:
				return nil, fmt.Errorf("message %d, part %d: must have text or media, one of them", i+1, j+1)
			}
		}
		out = append(out, msg)
	}
	return out, nil
}
