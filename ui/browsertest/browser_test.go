package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// The limits the interface promises.
const (
	narrowWidth = 375       // px: nothing scrolls sideways at this width
	scriptLimit = 30 * 1024 // bytes: all the scripts it loads, together
)

// The width of the window, and of the screenshots.
const desktopWidth, desktopHeight = 1000, 800

// tab is a browser tab of its own browser context (its own cookies),
// used as a person would: it opens /ui/, follows links by their names,
// fills in fields by their labels and presses buttons. Every page it
// reaches is checked (see checkPage).
type tab struct {
	t       testing.TB
	srv     *server
	ctx     context.Context
	scripts bool // page scripts run

	signedIn bool             // the pages must offer Sign out
	status   int64            // the HTTP status of the page shown
	url      string           // its URL
	headers  network.Headers  // its response headers
	scriptSz map[string]int64 // every script loaded so far, by URL: its size

	mu         sync.Mutex
	requests   []*network.Request // every request, in order
	checked    int                // how many of requests checkPage has seen
	exceptions []string
	logErrors  []string // the browser's own errors: CSP refusals, mostly
	dialogs    []string
}

// newTab opens a tab on srv, with page scripts on or off.
func newTab(t testing.TB, srv *server, scripts bool) *tab {
	t.Helper()
	b := &tab{t: t, srv: srv, scripts: scripts, scriptSz: map[string]int64{}}
	ctx, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext(), chromedp.WithListener(b.listen))
	t.Cleanup(cancel)
	b.ctx = ctx
	if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: !scripts}); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	b.viewport(desktopWidth, desktopHeight, false)
	return b
}

// listen records what the checks need. It runs on the tab's event loop,
// so it only records; a dialog is dismissed from another goroutine.
func (b *tab) listen(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		b.requests = append(b.requests, ev.Request)
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		msg := d.Text
		if d.Exception != nil {
			msg += " " + d.Exception.Description
		}
		b.exceptions = append(b.exceptions, fmt.Sprintf("%s (%s:%d)", msg, d.URL, d.LineNumber+1))
	case *log.EventEntryAdded:
		// Network errors are the 4xx answers of refusals, which the tests
		// provoke; anything else at error level is a fault of the page,
		// such as a refusal by its own Content-Security-Policy.
		if e := ev.Entry; e.Level == log.EntryLevelError && e.Source != log.EntrySourceNetwork {
			b.logErrors = append(b.logErrors, fmt.Sprintf("%s: %s (%s)", e.Source, e.Text, e.URL))
		}
	case *page.EventJavascriptDialogOpening:
		b.dialogs = append(b.dialogs, fmt.Sprintf("%s %q", ev.Type, ev.Message))
		go func() {
			_, _ = chromedp.Call(b.ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}()
	}
}

// viewport sets the size of the window, as a phone's (mobile: the meta
// viewport applies) or a desktop's.
func (b *tab) viewport(width, height int64, mobile bool) {
	b.t.Helper()
	_, err := chromedp.Call(b.ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
		Width: width, Height: height, DeviceScaleFactor: 1, Mobile: mobile,
	})
	if err != nil {
		b.t.Fatalf("setting the viewport to %dx%d: %v", width, height, err)
	}
}

// open goes to path on the server, as typed into the address bar, and
// returns the page's status.
func (b *tab) open(path string) int64 {
	b.t.Helper()
	return b.navigate("opening "+path, chromedp.Navigate(b.srv.origin+path))
}

// follow clicks the link named name and returns the new page's status.
func (b *tab) follow(name string) int64 {
	b.t.Helper()
	n := b.one("link", name)
	return b.navigate(fmt.Sprintf("following the link %q", name), b.click(n))
}

// press clicks the button named name, which submits its form, and
// returns the status of the page that answers.
func (b *tab) press(name string) int64 {
	b.t.Helper()
	n := b.one("button", name)
	return b.navigate(fmt.Sprintf("pressing the button %q", name), b.click(n))
}

// navigate runs the action, waits for the page it leads to, and checks
// that page.
func (b *tab) navigate(what string, action chromedp.Action[chromedp.Void]) int64 {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	resp, err := chromedp.RunResponse(ctx, action)
	if err != nil {
		b.t.Fatalf("%s (on %s): %v", what, b.url, err)
	}
	b.status, b.url, b.headers = resp.Status, resp.URL, resp.Headers
	b.checkPage()
	return b.status
}

// click scrolls to the element and clicks its middle with the mouse.
func (b *tab) click(n cdp.BackendNodeID) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if _, err := cdp.Call(ctx, t, dom.ScrollIntoViewIfNeeded, dom.ScrollIntoViewIfNeededParams{BackendNodeID: n}); err != nil {
			return err
		}
		q, err := cdp.Call(ctx, t, dom.GetContentQuads, dom.GetContentQuadsParams{BackendNodeID: n})
		if err != nil {
			return err
		}
		if len(q.Quads) == 0 || len(q.Quads[0]) < 8 {
			return fmt.Errorf("the element has no box on screen")
		}
		c := q.Quads[0]
		_, err = chromedp.MouseClickXY((c[0]+c[4])/2, (c[1]+c[5])/2)(ctx, t)
		return err
	})
}

// The roles of form fields, as Chromium's accessibility tree names them.
var fieldRoles = []string{"textbox", "searchbox", "combobox", "listbox", "spinbutton", "checkbox", "radio"}

// find returns the elements of the page that the accessibility tree
// gives role (any role of fields when role is "field") and the accessible
// name name; hidden ones are left out.
func (b *tab) find(role, name string) []cdp.BackendNodeID {
	b.t.Helper()
	doc, err := chromedp.Run(b.ctx, chromedp.Evaluate[*runtime.RemoteObject](`document`))
	if err != nil {
		b.t.Fatal(err)
	}
	q := accessibility.QueryAXTreeParams{ObjectID: doc.ObjectID, AccessibleName: name}
	if role != "field" {
		q.Role = role
	}
	res, err := chromedp.Call(b.ctx, accessibility.QueryAXTree, q)
	if err != nil {
		b.t.Fatalf("looking for the %s %q: %v", role, name, err)
	}
	var found []cdp.BackendNodeID
	for _, n := range res.Nodes {
		if n.Ignored || n.BackendDOMNodeID == 0 {
			continue
		}
		if role == "field" && !slices.Contains(fieldRoles, axString(n.Role)) {
			continue
		}
		found = append(found, n.BackendDOMNodeID)
	}
	return found
}

// has reports whether the page has an element of role named name.
func (b *tab) has(role, name string) bool {
	b.t.Helper()
	return len(b.find(role, name)) > 0
}

// one returns the one element of role named name, and fails the test
// when there is none or more than one.
func (b *tab) one(role, name string) cdp.BackendNodeID {
	b.t.Helper()
	ns := b.find(role, name)
	if len(ns) != 1 {
		b.t.Fatalf("%s (status %d): %d elements of role %s named %q, want 1; the page says:\n%s", b.url, b.status, len(ns), role, name, b.text())
	}
	return ns[0]
}

func axString(v *accessibility.Value) string {
	if v == nil {
		return ""
	}
	var s string
	_ = json.Unmarshal(v.Value, &s)
	return s
}

// call runs the JavaScript function fn with the element as this and
// args (an element given as its cdp.BackendNodeID), through the DevTools
// protocol (which works with page scripts off too), and decodes its
// result into out (unless nil).
func (b *tab) call(n cdp.BackendNodeID, fn string, out any, args ...any) {
	b.t.Helper()
	obj, err := chromedp.Call(b.ctx, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: n})
	if err != nil {
		b.t.Fatal(err)
	}
	var cargs []*runtime.CallArgument
	for _, a := range args {
		if e, ok := a.(cdp.BackendNodeID); ok { // an element
			o, err := chromedp.Call(b.ctx, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: e})
			if err != nil {
				b.t.Fatal(err)
			}
			cargs = append(cargs, &runtime.CallArgument{ObjectID: o.Object.ObjectID})
			continue
		}
		v, err := json.Marshal(a)
		if err != nil {
			b.t.Fatal(err)
		}
		cargs = append(cargs, &runtime.CallArgument{Value: jsonv2.Value(v)})
	}
	yes := true
	res, err := chromedp.Call(b.ctx, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		ObjectID: obj.Object.ObjectID, FunctionDeclaration: fn, Arguments: cargs, ReturnByValue: &yes,
	})
	if err != nil {
		b.t.Fatal(err)
	}
	if res.ExceptionDetails != nil {
		b.t.Fatalf("%s: %s", fn, res.ExceptionDetails.Exception.Description)
	}
	if out != nil && len(res.Result.Value) > 0 {
		if err := json.Unmarshal(res.Result.Value, out); err != nil {
			b.t.Fatal(err)
		}
	}
}

// eval evaluates the JavaScript expression in the page (also with page
// scripts off) and decodes its result into out (unless nil).
func (b *tab) eval(expr string, out any) {
	b.t.Helper()
	if err := b.tryEval(expr, out); err != nil {
		b.t.Fatal(err)
	}
}

// tryEval is eval for a page that may be navigating away (a page that
// moves on by itself): the error of an evaluation cut short is returned,
// not fatal.
func (b *tab) tryEval(expr string, out any) error {
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]byte](expr))
	if err != nil {
		return fmt.Errorf("%s: %w", expr, err)
	}
	if out != nil {
		if err := json.Unmarshal(v, out); err != nil {
			return fmt.Errorf("%s: %w: %s", expr, err, v)
		}
	}
	return nil
}

// fill types value into the text field labelled name, replacing what it
// held, as a person does: select all, delete, type; each "\n" is the
// Enter key.
func (b *tab) fill(name, value string) {
	b.t.Helper()
	n := b.one("field", name)
	var tag string
	b.call(n, `function() { return this.tagName + (this.type ? ":" + this.type : "") }`, &tag)
	if !strings.HasPrefix(tag, "TEXTAREA") && !strings.HasPrefix(tag, "INPUT:") || strings.Contains(tag, "checkbox") || strings.Contains(tag, "radio") {
		b.t.Fatalf("the field %q is a %s, not a text field", name, tag)
	}
	if _, err := chromedp.Call(b.ctx, dom.Focus, dom.FocusParams{BackendNodeID: n}); err != nil {
		b.t.Fatal(err)
	}
	steps := []chromedp.Action[chromedp.Void]{
		chromedp.KeyEvent("a", chromedp.KeyModifiers(chromedp.ModifierCtrl)),
		chromedp.KeyEvent("\b"),
	}
	for i, line := range strings.Split(value, "\n") {
		if i > 0 {
			steps = append(steps, chromedp.KeyEvent("\r"))
		}
		if line != "" {
			steps = append(steps, insertText(line))
		}
	}
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		b.t.Fatalf("typing into %q: %v", name, err)
	}
	var got string
	b.call(n, `function() { return this.value }`, &got)
	if got != value {
		b.t.Fatalf("typed %q into %q, and it holds %q", value, name, got)
	}
}

// insertText types text as one input (as an input method does).
func insertText(text string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, input.InsertText, input.InsertTextParams{Text: text})
		return err
	})
}

// choose picks, in the drop-down list labelled name, the option whose
// text is option or starts with option and ":", or whose value is option.
func (b *tab) choose(name, option string) {
	b.t.Helper()
	n := b.one("combobox", name)
	var got struct {
		OK      bool
		Options []string
	}
	b.call(n, `function(want) {
		const all = [...this.options].map(o => o.text);
		for (const o of this.options) {
			if (o.value === want || o.text === want || o.text.startsWith(want + ":")) {
				this.value = o.value;
				this.dispatchEvent(new Event("input", {bubbles: true}));
				this.dispatchEvent(new Event("change", {bubbles: true}));
				return {OK: true, Options: all};
			}
		}
		return {OK: false, Options: all};
	}`, &got, option)
	if !got.OK {
		b.t.Fatalf("the list %q has no option %q: %q", name, option, got.Options)
	}
}

// tick checks (on) or unchecks the checkbox labelled name, by clicking it.
func (b *tab) tick(name string, on bool) {
	b.t.Helper()
	n := b.one("checkbox", name)
	var checked bool
	b.call(n, `function() { return this.checked }`, &checked)
	if checked != on {
		if err := chromedp.Do(b.ctx, b.click(n)); err != nil {
			b.t.Fatal(err)
		}
	}
	b.call(n, `function() { return this.checked }`, &checked)
	if checked != on {
		b.t.Fatalf("clicking the checkbox %q did not make it %v", name, on)
	}
}

// text returns the text of the page's main part (of the whole page when
// it has none), as it is rendered.
func (b *tab) text() string {
	b.t.Helper()
	var s string
	b.eval(`(document.querySelector("main") || document.body).innerText`, &s)
	return s
}

// path returns the path of the page shown.
func (b *tab) path() string {
	u, err := url.Parse(b.url)
	if err != nil {
		return b.url
	}
	return u.Path
}

// spoken returns the text of the page's main part as a screen reader
// reads it: the accessibility tree's text, in order, without what is
// hidden from it (aria-hidden) and with what is hidden only from the eye.
func (b *tab) spoken() string {
	b.t.Helper()
	tree, err := chromedp.Call(b.ctx, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{})
	if err != nil {
		b.t.Fatal(err)
	}
	byID := map[accessibility.NodeID]*accessibility.Node{}
	var root *accessibility.Node
	for _, n := range tree.Nodes {
		byID[n.NodeID] = n
		if root == nil && !n.Ignored && axString(n.Role) == "main" {
			root = n
		}
	}
	if root == nil && len(tree.Nodes) > 0 {
		root = tree.Nodes[0]
	}
	var parts []string
	var walk func(n *accessibility.Node)
	walk = func(n *accessibility.Node) {
		if !n.Ignored && axString(n.Role) == "StaticText" {
			parts = append(parts, axString(n.Name))
			return
		}
		for _, c := range n.ChildIDs {
			if k := byID[c]; k != nil {
				walk(k)
			}
		}
	}
	if root != nil {
		walk(root)
	}
	return strings.Join(parts, " ")
}

// checkPage checks the page just reached for what every page promises.
func (b *tab) checkPage() {
	b.t.Helper()
	where := fmt.Sprintf("%s (status %d)", b.path(), b.status)
	b.checkEvents(where)
	b.checkHeaders(where)
	if b.signedIn && !b.has("button", "Sign out") {
		b.t.Errorf("%s: a signed-in page without a Sign out button", where)
	}
	b.checkNarrow(where)
	if b.scripts {
		// axe-core needs the page's event loop, which stops with scripts
		// off; so do the sizes of the scripts, which are not loaded then.
		b.checkScripts(where)
		b.checkAxe(where)
	}
}

// checkEvents fails the test for any script error, error of the browser
// (such as a refusal by the Content-Security-Policy), dialog, or request
// to another origin, since the last page.
func (b *tab) checkEvents(where string) {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range b.exceptions {
		b.t.Errorf("%s: a script error: %s", where, e)
	}
	for _, e := range b.logErrors {
		b.t.Errorf("%s: the browser reports an error: %s", where, e)
	}
	for _, d := range b.dialogs {
		b.t.Errorf("%s: a dialog opened: %s", where, d)
	}
	b.exceptions, b.logErrors, b.dialogs = nil, nil, nil
	for _, r := range b.requests[b.checked:] {
		u, err := url.Parse(r.URL)
		if err != nil || u.Scheme+"://"+u.Host != b.srv.origin {
			b.t.Errorf("%s: a request to another origin: %s %s", where, r.Method, r.URL)
		}
	}
	b.checked = len(b.requests)
}

// checkHeaders checks the headers that make a page safe to show.
func (b *tab) checkHeaders(where string) {
	b.t.Helper()
	h := map[string]string{}
	for k, v := range b.headers {
		s, _ := v.(string)
		h[strings.ToLower(k)] = s
	}
	csp := h["content-security-policy"]
	for _, want := range []string{"default-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			b.t.Errorf("%s: Content-Security-Policy %q lacks %s", where, csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
		b.t.Errorf("%s: Content-Security-Policy %q allows inline script", where, csp)
	}
	if h["x-content-type-options"] != "nosniff" || h["referrer-policy"] != "same-origin" {
		b.t.Errorf("%s: X-Content-Type-Options %q, Referrer-Policy %q", where, h["x-content-type-options"], h["referrer-policy"])
	}
}

// checkNarrow checks that at 375 px wide, as on a phone, nothing scrolls
// sideways.
func (b *tab) checkNarrow(where string) {
	b.t.Helper()
	b.viewport(narrowWidth, 800, true)
	defer b.viewport(desktopWidth, desktopHeight, false)
	var w struct{ Scroll, Client int }
	b.eval(`({Scroll: document.documentElement.scrollWidth, Client: document.documentElement.clientWidth})`, &w)
	if w.Client != narrowWidth {
		b.t.Errorf("%s: at %d px wide the page is laid out %d px wide (is its meta viewport width=device-width?)", where, narrowWidth, w.Client)
	}
	if w.Scroll > w.Client {
		var wide []string
		b.eval(`[...document.querySelectorAll("body *")].filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5).slice(0, 5).map(e => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + (e.className ? "." + e.className : "") + " " + Math.round(e.getBoundingClientRect().right) + "px")`, &wide)
		b.t.Errorf("%s: at %d px wide the page scrolls sideways (%d px of content); too wide: %v", where, narrowWidth, w.Scroll, wide)
	}
}

// checkScripts adds the scripts this page loaded to those seen so far,
// and checks that together they are at most 30 KiB.
func (b *tab) checkScripts(where string) {
	b.t.Helper()
	var loaded []struct {
		URL  string
		Size int64
	}
	b.eval(`performance.getEntriesByType("resource").filter(e => e.initiatorType === "script" || /\.m?js(\?|$)/.test(e.name)).map(e => ({URL: e.name, Size: e.decodedBodySize}))`, &loaded)
	for _, s := range loaded {
		b.scriptSz[s.URL] = max(b.scriptSz[s.URL], s.Size)
	}
	var inline int
	b.eval(`document.querySelectorAll("script:not([src])").length`, &inline)
	if inline > 0 {
		b.t.Errorf("%s: %d inline scripts", where, inline)
	}
	var total int64
	for _, n := range b.scriptSz {
		total += n
	}
	if total > scriptLimit {
		b.t.Errorf("%s: the scripts loaded so far total %d bytes, more than %d: %v", where, total, scriptLimit, b.scriptSz)
	}
}

// axeTags are the rules checked: WCAG 2.0 and 2.1, levels A and AA.
var axeTags = []string{"wcag2a", "wcag2aa", "wcag21a", "wcag21aa"}

// checkAxe runs axe-core on the page and fails the test for each
// violation of impact serious or critical.
func (b *tab) checkAxe(where string) {
	b.t.Helper()
	var loaded bool
	b.eval(`typeof window.axe === "object"`, &loaded)
	if !loaded {
		if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[chromedp.Void](axeSource)); err != nil {
			b.t.Fatalf("%s: loading axe-core: %v", where, err)
		}
	}
	tags, _ := json.Marshal(axeTags)
	expr := `axe.run(document, {runOnly: {type: "tag", values: ` + string(tags) + `}, resultTypes: ["violations"]}).then(r => r.violations.map(v => ({
		ID: v.id, Impact: v.impact, Help: v.help,
		Nodes: v.nodes.map(n => n.target.join(" ") + ": " + n.html + (n.failureSummary ? " — " + n.failureSummary : ""))})))`
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](expr, func(p *runtime.EvaluateParams) { p.AwaitPromise = ptrTo(true) }))
	if err != nil {
		b.t.Fatalf("%s: running axe-core: %v", where, err)
	}
	var violations []struct {
		ID, Impact, Help string
		Nodes            []string
	}
	if err := json.Unmarshal(v, &violations); err != nil {
		b.t.Fatalf("%s: axe-core's answer: %v: %s", where, err, v)
	}
	for _, v := range violations {
		if v.Impact == "serious" || v.Impact == "critical" {
			b.t.Errorf("%s: axe-core: %s (%s): %s\n\t%s", where, v.ID, v.Impact, v.Help, strings.Join(v.Nodes, "\n\t"))
		}
	}
}

func ptrTo[T any](v T) *T { return &v }

// screenshot saves the page, 1000 px wide and whole, as
// docs/screenshots/name.png, when PROMPTS_UPDATE_SCREENSHOTS=1 and page
// scripts are on (as most people see it).
func (b *tab) screenshot(name string) {
	b.t.Helper()
	if os.Getenv("PROMPTS_UPDATE_SCREENSHOTS") != "1" || !b.scripts {
		return
	}
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	dir := filepath.Join("..", "..", "docs", "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// signIn signs in on the sign-in page with the key of role, and checks
// that the projects follow.
func (b *tab) signIn(role string) {
	b.t.Helper()
	b.fill("API key", b.srv.keys[role].secret)
	b.signedIn = true
	if st := b.press("Sign in"); st != 200 {
		b.t.Fatalf("signing in with the %s key: status %d:\n%s", role, st, b.text())
	}
}

// modes runs f twice, as subtests: with page scripts on and off.
func modes(t *testing.T, f func(t *testing.T, scripts bool)) {
	for _, scripts := range []bool{true, false} {
		name := "scripts on"
		if !scripts {
			name = "scripts off"
		}
		t.Run(name, func(t *testing.T) { f(t, scripts) })
	}
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
