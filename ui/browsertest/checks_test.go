package browsertest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// The checks of every page must catch what they look for: each page
// below has one fault, and the check for it must say so (and a page with
// none must pass them all). Without this, a check that silently passed
// everything would look the same as an interface without faults.

// recorder stands in for the test, keeping what the checks report.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

func (r *recorder) Fatal(args ...any) {
	r.Errorf("%s", fmt.Sprint(args...))
	runtime.Goexit()
}

// record runs f with a recorder in place of t, and returns what it
// reported.
func record(t *testing.T, f func(r *recorder)) []string {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r.errs
}

// faultyPages serves one page per fault, each otherwise as the interface
// serves its pages (headers, lang, title, landmarks, viewport).
func faultyPages() http.Handler {
	page := func(head, body string) string {
		return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>A page</title>` + head +
			`</head><body><main><h1>A page</h1>` + body + `</main></body></html>`
	}
	pages := map[string]string{
		"/good":        page(`<script src="/small.js" defer></script>`, `<p>Nothing wrong here.</p>`),
		"/contrast":    page("", `<p class="faint">Hard to read.</p>`),
		"/wide":        page("", `<div class="wide">Too wide for a phone.</div>`),
		"/noviewport":  strings.Replace(page("", `<p>No viewport.</p>`), `<meta name="viewport" content="width=device-width, initial-scale=1">`, "", 1),
		"/bigscript":   page(`<script src="/big.js" defer></script>`, `<p>Heavy.</p>`),
		"/inline":      page(`<script>document.title = "inline"</script>`, `<p>Inline script.</p>`),
		"/foreign":     page("", `<img src="http://127.0.0.2:9/x.png" alt="from elsewhere">`),
		"/headers":     page("", `<p>No security headers.</p>`),
		"/dialog":      page(`<script src="/alert.js" defer></script>`, `<p>Alerts.</p>`),
		"/exception":   page(`<script src="/throw.js" defer></script>`, `<p>Throws.</p>`),
		"/title":       page(`<script src="/title.js" defer></script>`, `<p>Sets the title.</p>`),
		"/unlabelled":  page("", `<form><input name="q"><button>Go</button></form>`),
		"/noSignOut":   page("", `<p>Signed in, but no way out.</p>`),
		"/withSignOut": page("", `<form method="post" action="/"><button>Sign out</button></form>`),
	}
	files := map[string]string{
		"/style.css": `.faint { color: #ccc; background: #fff } .wide { width: 600px }`,
		"/small.js":  `document.documentElement.dataset.ok = "1";`,
		"/big.js":    "// " + strings.Repeat("x", 31*1024) + "\n",
		"/alert.js":  `alert("planted");`,
		"/throw.js":  `throw new Error("planted");`,
		"/title.js":  `document.title = "scripts ran";`,
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		if r.URL.Path != "/headers" {
			h.Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'")
			h.Set("X-Content-Type-Options", "nosniff")
			h.Set("Referrer-Policy", "same-origin")
		}
		if r.URL.Path == "/foreign" { // lets the request out, so that the check of origins sees it
			h.Set("Content-Security-Policy", "default-src *; frame-ancestors 'none'")
		}
		if f, ok := files[r.URL.Path]; ok {
			if strings.HasSuffix(r.URL.Path, ".css") {
				h.Set("Content-Type", "text/css")
			} else {
				h.Set("Content-Type", "text/javascript")
			}
			fmt.Fprint(w, f)
			return
		}
		p, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		h.Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, strings.Replace(p, "</head>", `<link rel="stylesheet" href="/style.css"></head>`, 1))
	})
}

func TestChecksCatchFaults(t *testing.T) {
	need(t)
	ts := httptest.NewServer(faultyPages())
	defer ts.Close()
	srv := &server{origin: ts.URL}
	for _, c := range []struct {
		path     string
		signedIn bool
		want     string // in what the checks report; "" for nothing reported
	}{
		{"/good", false, ""},
		{"/withSignOut", true, ""},
		{"/contrast", false, "axe-core: color-contrast (serious)"},
		{"/unlabelled", false, "axe-core: label (critical)"},
		{"/wide", false, "scrolls sideways"},
		{"/noviewport", false, "meta viewport"},
		{"/bigscript", false, "more than 30720"},
		{"/inline", false, "Content Security Policy"},
		{"/inline", false, "1 inline scripts"},
		{"/foreign", false, "a request to another origin: GET http://127.0.0.2:9/x.png"},
		{"/headers", false, "Content-Security-Policy \"\" lacks default-src 'self'"},
		{"/headers", false, "X-Content-Type-Options"},
		{"/dialog", false, `a dialog opened: alert "planted"`},
		{"/exception", false, "a script error: Uncaught"},
		{"/noSignOut", true, "a signed-in page without a Sign out button"},
	} {
		t.Run(strings.TrimPrefix(c.path, "/"), func(t *testing.T) {
			errs := record(t, func(r *recorder) {
				b := newTab(r, srv, true)
				b.signedIn = c.signedIn
				b.open(c.path)
			})
			all := strings.Join(errs, "\n")
			if c.want == "" && len(errs) > 0 {
				t.Errorf("the checks report a fault on a page without one:\n%s", all)
			}
			if c.want != "" && !strings.Contains(all, c.want) {
				t.Errorf("the checks do not report %q; they report:\n%s", c.want, all)
			}
		})
	}
}

// TestScriptsOffIsOff checks that a tab with scripts off runs none of
// the page's scripts, and one with scripts on does.
func TestScriptsOffIsOff(t *testing.T) {
	need(t)
	ts := httptest.NewServer(faultyPages())
	defer ts.Close()
	srv := &server{origin: ts.URL}
	for _, scripts := range []bool{true, false} {
		b := newTab(t, srv, scripts)
		b.open("/title")
		var title string
		b.eval(`document.title`, &title)
		if ran := title == "scripts ran"; ran != scripts {
			t.Errorf("scripts %v: the page's script ran: %v", scripts, ran)
		}
	}
}

// TestDiffMarksNeedText checks checkDiffMarks: lines marked in words pass;
// lines told apart by colour alone, or marked wrongly, fail.
func TestDiffMarksNeedText(t *testing.T) {
	lines := []string{"keep", "old line", "new line", "end"}
	marks := map[string]string{"old line": "removed", "new line": "added", "end": ""}
	for _, c := range []struct {
		spoken string
		ok     bool
	}{
		{"1 1 unchanged keep 2 removed old line 2 added new line 3 3 unchanged end", true},
		{"keep − old line + new line end", true},
		{"1 1 keep 2 old line 2 new line 3 3 end", false},                               // colour alone
		{"keep added old line removed new line end", false},                             // the wrong way round
		{"keep removed old line added new line added end", false},                       // an unchanged line marked
		{"1 1 unchanged keep 2 removed old line 2 added new line 3 3 unchanged", false}, // a line missing
	} {
		errs := record(t, func(r *recorder) { checkDiffMarks(r, c.spoken, lines, marks) })
		if (len(errs) == 0) != c.ok {
			t.Errorf("%q: reported %q, want ok=%v", c.spoken, errs, c.ok)
		}
	}
}
