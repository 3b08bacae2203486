package ui

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/promptkit/prompts"
)

// getPrompt returns the prompt, or answers 404 when it is unknown or of a
// project the key may not see (the same page either way).
func (c *call) getPrompt() (prompts.Prompt, bool) {
	p, err := c.h.store.GetPrompt(c.r.Context(), c.r.PathValue("prompt_id"))
	if err != nil {
		c.storeError(err)
		return prompts.Prompt{}, false
	}
	if !c.access.Allows(p.ProjectID) {
		c.h.notFound(c.w, c.r, c)
		return prompts.Prompt{}, false
	}
	return p, true
}

// state is a prompt as one page shows it: what is active in each
// environment, and the revision the page's forms expect.
type state struct {
	Prompt   prompts.Prompt // Revision: what the forms send back
	Project  prompts.Project
	Envs     []envState // the project's environments, in their order
	Latest   int        // the latest version's number; 0 with none
	LastSeen string     // the id of the newest deployment record, or ""
}

type envState struct {
	Env       prompts.Environment
	Protected bool                   // changing what it points at needs admin
	Version   *prompts.PromptVersion // nil when nothing is active; a split's first entry's
	Split     prompts.Split          // the split it holds, nil when none
	Last      *prompts.Deployment    // the environment's latest change, nil when none
}

// Serves says what the environment serves, for people: "version 3",
// "versions 3 (90%) and 4 (10%)", or "nothing active".
func (es envState) Serves() string {
	if es.Version == nil {
		return "nothing active"
	}
	return served(es.Split, &es.Version.VersionNumber, "")
}

// env returns the state of the environment e.
func (s state) env(e prompts.Environment) envState {
	for _, es := range s.Envs {
		if es.Env == e {
			return es
		}
	}
	return envState{Env: e}
}

// Environments lists the project's environments, for the templates'
// pickers.
func (s state) Environments() []prompts.Environment {
	out := make([]prompts.Environment, len(s.Envs))
	for i, es := range s.Envs {
		out[i] = es.Env
	}
	return out
}

// readState reads what the prompt's page shows. Every environment of the
// project is read at one revision when the prompt holds still for it; when it keeps
// moving, the smallest revision seen is kept, so that a change made from
// the page is refused, and says what changed, rather than made on a
// state the page did not show.
func (c *call) readState() (state, bool) {
	p, ok := c.getPrompt()
	if !ok {
		return state{}, false
	}
	ctx := c.r.Context()
	envs, err := c.h.store.ListEnvironments(ctx, p.ProjectID)
	if err != nil {
		c.storeError(err)
		return state{}, false
	}
	var st state
	for try := 0; try < 3; try++ {
		st = state{Envs: make([]envState, 0, len(envs))}
		rev := int64(-1)
		same := true
		for _, pe := range envs {
			e := pe.Name
			ap, err := c.h.store.GetActive(ctx, p.ID, e)
			if err != nil {
				c.storeError(err)
				return state{}, false
			}
			if rev >= 0 && ap.Revision != rev {
				same = false
			}
			if rev < 0 || ap.Revision < rev {
				rev, st.Prompt = ap.Revision, ap.Prompt
			}
			st.Envs = append(st.Envs, envState{Env: e, Protected: pe.Protected, Version: ap.ActiveVersion, Split: ap.Split})
		}
		if same {
			break
		}
	}
	// The latest version's number, and the newest record of each
	// environment.
	if st.Prompt.LatestVersionID != "" {
		vs, _, err := c.h.store.ListVersions(ctx, p.ID, prompts.Page{Limit: 1})
		if err != nil {
			c.storeError(err)
			return state{}, false
		}
		if len(vs) > 0 {
			st.Latest = vs[0].VersionNumber
		}
	}
	for i, es := range st.Envs {
		ds, _, err := c.h.store.ListDeployments(ctx, prompts.DeploymentFilter{PromptID: p.ID, Environment: es.Env, Page: prompts.Page{Limit: 1}})
		if err != nil {
			c.storeError(err)
			return state{}, false
		}
		if len(ds) > 0 {
			st.Envs[i].Last = &ds[0]
			if ds[0].ID > st.LastSeen {
				st.LastSeen = ds[0].ID
			}
		}
	}
	proj, err := c.h.store.GetProject(ctx, st.Prompt.ProjectID)
	if err != nil {
		c.storeError(err)
		return state{}, false
	}
	st.Project = proj
	return st, true
}

// ActiveIn returns the environments the version with this id is active
// in, each with the version's share of subjects where the environment
// holds a split: "staging", "production (10%)".
func (s state) ActiveIn(versionID string) []string {
	var out []string
	for _, es := range s.Envs {
		for i, e := range es.Split {
			if e.VersionID == versionID {
				out = append(out, string(es.Env)+" ("+sharePercent(es.Split, i)+")")
			}
		}
		if es.Split == nil && es.Version != nil && es.Version.ID == versionID {
			out = append(out, string(es.Env))
		}
	}
	return out
}

// crumbs are the breadcrumbs to the prompt's page, and then to here.
func (c *call) crumbs(st state, here ...crumb) []crumb {
	cs := []crumb{
		{Name: "Projects", URL: c.h.prefix},
		{Name: st.Project.Name, URL: c.h.prefix + "projects/" + st.Project.ID},
		{Name: st.Prompt.Key, URL: c.h.prefix + "prompts/" + st.Prompt.ID},
	}
	if len(here) == 0 {
		cs[2].URL = ""
	}
	return append(cs, here...)
}

type promptData struct {
	state
	Versions     []prompts.PromptVersion
	MoreVersions string // the after= of the next page of versions, or ""
	History      []prompts.Deployment
	MoreHistory  string
	CompareFrom  int
	CompareTo    int
}

// pageSize is how many versions and records the prompt's page lists at
// once.
const pageSize = 50

// prompt is GET {prefix}prompts/{prompt_id}: what is active where, the
// versions (newest first) and the deployment history (newest first),
// each paged by versions_after= and history_after=.
func (c *call) prompt() {
	st, ok := c.readState()
	if !ok {
		return
	}
	d := promptData{state: st}
	q := c.r.URL.Query()
	ctx := c.r.Context()
	vs, more, err := c.h.store.ListVersions(ctx, st.Prompt.ID, prompts.Page{Limit: pageSize, After: q.Get("versions_after")})
	if err != nil {
		c.storeError(err)
		return
	}
	d.Versions = vs
	if more && len(vs) > 0 {
		d.MoreVersions = vs[len(vs)-1].ID
	}
	hs, more, err := c.h.store.ListDeployments(ctx, prompts.DeploymentFilter{PromptID: st.Prompt.ID, Page: prompts.Page{Limit: pageSize, After: q.Get("history_after")}})
	if err != nil {
		c.storeError(err)
		return
	}
	d.History = hs
	if more && len(hs) > 0 {
		d.MoreHistory = hs[len(hs)-1].ID
	}
	d.CompareTo = st.Latest
	d.CompareFrom = max(st.Latest-1, 1)
	c.render(http.StatusOK, "prompt", c.view(st.Prompt.Key, d, c.crumbs(st)...))
}

type versionData struct {
	state
	Version  prompts.PromptVersion
	Metadata string   // indented, or "" for null
	Active   []string // the environments it is active in
	Format   prompts.TemplateFormat
	Front    frontMatter // dotprompt: the front matter, read
	Chat     chatView    // dotprompt: rendered with input.default
}

// version is GET {prefix}prompts/{prompt_id}/versions/{number}.
func (c *call) version() {
	st, ok := c.readState()
	if !ok {
		return
	}
	v, ok := c.getVersion(st.Prompt.ID, c.r.PathValue("number"))
	if !ok {
		return
	}
	d := versionData{state: st, Version: v, Metadata: prettyMetadata(v.Metadata), Active: st.ActiveIn(v.ID), Format: v.TemplateFormat.Or(prompts.FormatPlain)}
	if d.Format == prompts.FormatDotprompt {
		d.Front = readFrontMatter(v.Metadata)
		d.Chat = preview(c.r.Context(), c.h.render, v, d.Front)
	}
	title := "Version " + strconv.Itoa(v.VersionNumber) + " of " + st.Prompt.Key
	c.render(http.StatusOK, "version", c.view(title, d, c.crumbs(st, crumb{Name: "Version " + strconv.Itoa(v.VersionNumber)})...))
}

// getVersion returns the version with the number s, or answers 404. Only
// a number's canonical decimal form names a version (1, not 01 or +1):
// each version has one address.
func (c *call) getVersion(promptID, s string) (prompts.PromptVersion, bool) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || strconv.Itoa(n) != s {
		c.h.notFound(c.w, c.r, c)
		return prompts.PromptVersion{}, false
	}
	v, err := c.h.store.GetVersion(c.r.Context(), promptID, n)
	if err != nil {
		c.storeError(err)
		return prompts.PromptVersion{}, false
	}
	return v, true
}

// prettyMetadata returns m indented for people, or "" for null.
func prettyMetadata(m prompts.Metadata) string {
	if m.IsNull() {
		return ""
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, []byte(m), "", "  "); err != nil {
		return string(m)
	}
	return buf.String()
}

type compareData struct {
	state
	Choices          []prompts.PromptVersion // what From and To offer, newest first
	From, To         prompts.PromptVersion
	Lines            []diffLine
	Added, Removed   int
	MetaLines        []diffLine // the metadata's difference, when it differs
	Settings         settingsChange
	VarsAdded        []string
	VarsRemoved      []string
	Same             bool
	ChoicesTruncated bool
	FormatFrom       prompts.TemplateFormat
	FormatTo         prompts.TemplateFormat
}

// compare is GET {prefix}prompts/{prompt_id}/compare?from=N&to=M: the
// difference between any two versions, line by line.
func (c *call) compare() {
	st, ok := c.readState()
	if !ok {
		return
	}
	if st.Latest == 0 {
		c.fail(http.StatusNotFound, errorData{Title: "Nothing to compare", Message: "This prompt has no versions yet.", Back: c.h.prefix + "prompts/" + st.Prompt.ID, BackTo: "Back to " + st.Prompt.Key})
		return
	}
	q := c.r.URL.Query()
	from, to := q.Get("from"), q.Get("to")
	if to == "" {
		to = strconv.Itoa(st.Latest)
	}
	if from == "" {
		from = strconv.Itoa(max(st.Latest-1, 1))
	}
	a, ok := c.getVersion(st.Prompt.ID, from)
	if !ok {
		return
	}
	b, ok := c.getVersion(st.Prompt.ID, to)
	if !ok {
		return
	}
	d := compareData{state: st, From: a, To: b}
	var more bool
	var err error
	d.Choices, more, err = c.h.store.ListVersions(c.r.Context(), st.Prompt.ID, prompts.Page{Limit: prompts.MaxLimit})
	if err != nil {
		c.storeError(err)
		return
	}
	d.ChoicesTruncated = more
	d.Lines, d.Added, d.Removed = lineDiff(a.Content, b.Content)
	if ma, mb := prettyMetadata(a.Metadata), prettyMetadata(b.Metadata); ma != mb {
		d.MetaLines, _, _ = lineDiff(ma, mb)
	}
	d.Settings = diffSettings(a.Metadata, b.Metadata)
	vc := prompts.DiffVariables(a.Variables, b.Variables)
	d.VarsAdded, d.VarsRemoved = vc.Added, vc.Removed
	d.Same = a.Content == b.Content
	d.FormatFrom, d.FormatTo = a.TemplateFormat.Or(prompts.FormatPlain), b.TemplateFormat.Or(prompts.FormatPlain)
	title := "Compare versions " + strconv.Itoa(a.VersionNumber) + " and " + strconv.Itoa(b.VersionNumber) + " of " + st.Prompt.Key
	c.render(http.StatusOK, "compare", c.view(title, d, c.crumbs(st, crumb{Name: "Compare"})...))
}

// settingsChange names the settings (metadata_ members, and the members
// of those that are objects, as config.temperature) that two versions'
// metadata add, remove and change.
type settingsChange struct {
	Added, Removed, Changed []string
}

// Any reports whether anything changed.
func (s settingsChange) Any() bool { return len(s.Added)+len(s.Removed)+len(s.Changed) > 0 }

func diffSettings(a, b prompts.Metadata) settingsChange {
	var sc settingsChange
	fa, fb := flatSettings(a), flatSettings(b)
	for _, k := range fb.keys {
		va, ok := fa.vals[k]
		switch {
		case !ok:
			sc.Added = append(sc.Added, k)
		case va != fb.vals[k]:
			sc.Changed = append(sc.Changed, k)
		}
	}
	for _, k := range fa.keys {
		if _, ok := fb.vals[k]; !ok {
			sc.Removed = append(sc.Removed, k)
		}
	}
	return sc
}

type flat struct {
	keys []string
	vals map[string]string // compact JSON
}

// flatSettings lists m's members two levels deep: a member whose value
// is an object with members is listed by its members.
func flatSettings(m prompts.Metadata) flat {
	f := flat{vals: map[string]string{}}
	if m.IsNull() {
		return f
	}
	ms, err := members(string(m))
	if err != nil {
		return f
	}
	add := func(k string, raw json.RawMessage) {
		if _, seen := f.vals[k]; !seen {
			f.keys = append(f.keys, k)
		}
		var buf bytes.Buffer
		if json.Compact(&buf, raw) != nil {
			buf.Reset()
			buf.Write(raw)
		}
		f.vals[k] = buf.String()
	}
	for _, x := range ms {
		if inner, err := members(string(x.Raw)); err == nil && len(inner) > 0 {
			for _, y := range inner {
				add(x.Key+"."+y.Key, y.Raw)
			}
			continue
		}
		add(x.Key, x.Raw)
	}
	return f
}
