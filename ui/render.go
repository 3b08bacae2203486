package ui

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/httpapi"
)

//go:embed templates/*.html
var templateFS embed.FS

// pages holds the templates of every page in one set, each parsed once:
// the layout's two halves ("top" and "bottom"), the partials, each page's
// "content" named after the page ("content:prompt"), and for each page a
// template that calls the three ("page:prompt"). The parse trees (about
// 225 KB in 5,000 objects) stay alive from the first page the handler
// serves, and every garbage collection of the process marks them, also
// while only the API is used: New checks the templates, and the first
// page parses them again to keep them, so that an application (or a
// standalone server) whose UI nobody opens does not pay for them on the
// API's path (BENCHMARKS.md).
type pages struct {
	set   *template.Template
	names map[string]bool // the pages
}

// execute writes the page named page with v.
func (p *pages) execute(buf *bytes.Buffer, page string, v view) error {
	return p.set.ExecuteTemplate(buf, "page:"+page, v)
}

var funcs = template.FuncMap{
	"when": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
	"iso":  func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"join": strings.Join,
	// count says n things: "1 line", "2 lines".
	"count": func(n int, one, many string) string {
		if n == 1 {
			return "1 " + one
		}
		return strconv.Itoa(n) + " " + many
	},
	"deref": func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	},
	"num": func(n *int) string {
		if n == nil {
			return ""
		}
		return strconv.Itoa(*n)
	},
	"sub": func(a, b int) int { return a - b },
	"add": func(a, b int) int { return a + b },
	"action": func(a prompts.Action) string {
		switch a {
		case prompts.ActionActivate:
			return "Activated"
		case prompts.ActionDeactivate:
			return "Deactivated"
		case prompts.ActionRollback:
			return "Rolled back"
		case prompts.ActionSplit:
			return "Split"
		}
		return string(a)
	},
	"served":  served,
	"percent": sharePercent,
	"label": func(field string) string {
		if l, ok := fieldLabels[field]; ok {
			return l
		}
		return field
	},
	"role":   roleLabel,
	"pretty": func(raw []byte) string { return prettyJSON(raw) },
	"schemaOf": func(caption string, s *schemaView) map[string]any {
		return map[string]any{"Caption": caption, "Props": s.Props, "JSON": s.JSON, "Err": s.Err}
	},
	"diffOf": func(caption string, lines []diffLine) map[string]any {
		return map[string]any{"Caption": caption, "Lines": lines}
	},
}

func loadPages() (*pages, error) {
	set, err := template.New("partials").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/partials.html")
	if err != nil {
		return nil, err
	}
	if set.Lookup("top") == nil || set.Lookup("bottom") == nil {
		return nil, errors.New(`ui: templates/layout.html: want {{define "top"}} and {{define "bottom"}}`)
	}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	p := &pages{set: set, names: map[string]bool{}}
	for _, name := range names {
		if name == "templates/layout.html" || name == "templates/partials.html" {
			continue
		}
		page := strings.TrimSuffix(strings.TrimPrefix(name, "templates/"), ".html")
		content, err := templateFS.ReadFile(name)
		if err != nil {
			return nil, err
		}
		c, ok := renamed(string(content), `{{define "content"}}`, `{{define "content:`+page+`"}}`)
		if !ok {
			return nil, fmt.Errorf("ui: %s: want one {{define \"content\"}}", name)
		}
		call := `{{template "top" .}}{{template "content:` + page + `" .}}{{template "bottom" .}}`
		if _, err := set.New("page:" + page).Parse(call + c); err != nil {
			return nil, err
		}
		p.names[page] = true
	}
	return p, nil
}

// renamed returns s with its one old replaced by new, and whether s held
// exactly one old.
func renamed(s, old, new string) (string, bool) {
	return strings.Replace(s, old, new, 1), strings.Count(s, old) == 1
}

// fieldLabels are the labels of the forms' fields, to name them in a
// form's summary of errors.
var fieldLabels = map[string]string{
	"content":        "Content",
	"change_summary": "Change summary",
	"metadata":       "Metadata",
	"reason":         "Reason",
	"environment":    "Environment",
	"version":        "Version",
	"key":            "Key",
	"name":           "Name",
	"description":    "Description",
	"form":           "The form",
	"history":        "History",
	"split":          "Split",
	"subject":        "Subject",
	"context":        "Context",
	"model":          "Model",
	"config":         "Config",
	"format":         "Template format",
}

// view is what every page gets: the layout's part, and the page's Data.
type view struct {
	Refresh string // a page to go on to at once (meta refresh), or ""
	Title   string
	Prefix  string
	CSS     string
	JS      string
	User    *viewer // nil when signed out
	CSRF    string
	Flash   string
	Crumbs  []crumb
	Data    any
}

type viewer struct {
	Name string
	Role httpapi.Role
}

// Label names the viewer for people.
func (v viewer) Label() string {
	if v.Name == "" {
		return "an unnamed key"
	}
	return v.Name
}

type crumb struct {
	Name string
	URL  string // "" for the current page
}

// CanWrite and CanDeploy tell templates what to offer.
func (v view) CanWrite() bool  { return v.User != nil && allows(v.User.Role, httpapi.RoleWrite) }
func (v view) CanDeploy() bool { return v.User != nil && allows(v.User.Role, httpapi.RoleDeploy) }

func allows(have, need httpapi.Role) bool { return have >= need && have <= httpapi.RoleAdmin }

// call is one request to a page or action, with its session when signed in.
type call struct {
	h      *Handler
	w      http.ResponseWriter
	r      *http.Request
	s      Session
	sid    string
	access httpapi.Access // what the session's key may do, as the Authenticator answered for this request
	signed bool
}

// view returns the layout's part of a page for this call.
func (c *call) view(title string, data any, crumbs ...crumb) view {
	v := view{Title: title, Prefix: c.h.prefix, CSS: c.h.static.url(c.h.prefix, "ui.css"), JS: c.h.static.url(c.h.prefix, "ui.js"), Crumbs: crumbs, Data: data}
	if c.signed {
		v.User = &viewer{Name: c.access.Name, Role: c.access.Role}
		v.CSRF = c.s.CSRF
		if c.s.Flash != "" {
			v.Flash = c.s.Flash
			c.s.Flash = ""
			if err := c.h.save(c.r.Context(), c.sid, c.s); err != nil {
				c.h.log.Warn("ui: saving the session", "err", err)
			}
		}
	}
	return v
}

// render writes the page with status. A template that fails is a 500, and
// nothing of the page is sent.
func (c *call) render(status int, page string, v view) {
	pages, err := c.h.pages()
	if err != nil { // New parsed the same templates: never
		c.h.log.Error("ui: parsing the templates", "err", err)
		http.Error(c.w, "500 internal server error", http.StatusInternalServerError)
		return
	}
	var buf bytes.Buffer
	if !pages.names[page] {
		c.h.log.Error("ui: no such page", "page", page)
		status, page = http.StatusInternalServerError, "error"
		v.Data, v.Title = errorData{Title: "Something went wrong", Message: "The page could not be shown. The cause was logged."}, "Something went wrong"
	}
	if err := pages.execute(&buf, page, v); err != nil {
		c.h.log.Error("ui: rendering a page", "page", page, "err", err)
		buf.Reset()
		status = http.StatusInternalServerError
		v.Data, v.Title = errorData{Title: "Something went wrong", Message: "The page could not be shown. The cause was logged."}, "Something went wrong"
		if err := pages.execute(&buf, "error", v); err != nil {
			http.Error(c.w, "500 internal server error", http.StatusInternalServerError)
			return
		}
	}
	hd := c.w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Cache-Control", "no-store")
	c.w.WriteHeader(status)
	c.w.Write(buf.Bytes())
}

// errorData is the error page's data.
type errorData struct {
	Title   string
	Message string
	Details []string
	Back    string // a link back, or ""
	BackTo  string // its text
}

// fail answers status with an error page. s is the session, when the
// request has one, so the page keeps its header.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, c *call, status int, title, message string) {
	if c == nil {
		c = &call{h: h, w: w, r: r}
		_, _ = h.signedIn(c) // the page's header when signed in; after an error, the page as signed out
	}
	c.fail(status, errorData{Title: title, Message: message})
}

func (c *call) fail(status int, d errorData) {
	if d.Back == "" {
		d.Back, d.BackTo = c.h.prefix, "Back to the projects"
		if !c.signed {
			d.BackTo = "Back to sign-in"
		}
	}
	c.render(status, "error", c.view(d.Title, d))
}

func (h *Handler) notFound(w http.ResponseWriter, r *http.Request, c *call) {
	h.fail(w, r, c, http.StatusNotFound, "Not found", "There is nothing here, or nothing this key may see.")
}

// storeError answers an error of the Store: its status as the HTTP
// interface gives it, and a page that says why. Internal and unavailable
// causes go to the log, not the page.
func (c *call) storeError(err error) {
	var pe *prompts.Error
	errors.As(err, &pe)
	switch prompts.ErrorCode(err) {
	case prompts.CodeNotFound:
		c.h.notFound(c.w, c.r, c)
	case prompts.CodeInvalid:
		d := errorData{Title: "Invalid input", Message: "The input breaks a rule; nothing was changed."}
		for _, f := range pe.Fields {
			d.Details = append(d.Details, f.Field+": "+f.Detail)
		}
		c.fail(http.StatusBadRequest, d)
	case prompts.CodeConflict, prompts.CodeVariablesChanged, prompts.CodePartialUnavailable, prompts.CodePartialInUse:
		c.fail(http.StatusConflict, errorData{Title: "Refused", Message: pe.Message + ". Nothing was changed."})
	case prompts.CodeForbidden: // a protected environment
		c.fail(http.StatusForbidden, errorData{Title: "Not allowed", Message: pe.Message + ". Nothing was changed."})
	case prompts.CodePreconditionFailed:
		c.fail(http.StatusPreconditionFailed, errorData{Title: "This page was out of date", Message: "The prompt changed since the page was loaded. Nothing was changed."})
	case prompts.CodeUnavailable:
		c.w.Header().Set("Retry-After", "1")
		if errors.As(err, new(*authError)) {
			c.h.log.Warn("ui: the authenticator is unavailable", "path", c.r.URL.Path, "err", err)
			c.fail(http.StatusServiceUnavailable, errorData{Title: "Unavailable", Message: "The API key could not be checked just now. Nothing was changed; try again in a moment."})
			return
		}
		c.h.log.Warn("ui: the store is unavailable", "path", c.r.URL.Path, "err", err)
		c.fail(http.StatusServiceUnavailable, errorData{Title: "Unavailable", Message: "The store does not answer just now. Nothing was changed; try again in a moment."})
	default:
		what := "ui: the store failed"
		if errors.As(err, new(*authError)) {
			what = "ui: the authenticator failed"
		}
		c.h.log.Error(what, "path", c.r.URL.Path, "err", err)
		c.fail(http.StatusInternalServerError, errorData{Title: "Something went wrong", Message: "The cause was logged. Nothing was changed, or, if it was, the page after a reload shows it."})
	}
}

// forbidden answers a role that does not allow what was asked.
func (c *call) forbidden(need httpapi.Role) {
	c.fail(http.StatusForbidden, errorData{Title: "Not allowed", Message: fmt.Sprintf("This needs a key with the %s role; the key signed in has the %s role. Nothing was changed.", need, c.access.Role)})
}
