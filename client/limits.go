package client

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/promptkit/prompts"
)

// What the client reads of a server, and where it sends its key: a
// server that answers without end, or sends the client elsewhere, costs
// it a bounded amount of memory and never learns the key by proxy.

// DefaultMaxAnswerSize bounds the body of a JSON answer that the client
// reads, unless WithMaxAnswerSize says otherwise: 64 MiB. The body of an
// error answer is read up to 64 KiB; the rest is left unread.
const DefaultMaxAnswerSize = 64 << 20

// MaxEventSize bounds one event of the event stream (Feed, WaitEvents):
// 1 MiB of its data.
const MaxEventSize = 1 << 20

// maxProblemSize bounds the body of an error answer that the client
// reads: its problem details, or a proxy's page.
const maxProblemSize = 64 << 10

// maxRedirects is how many redirects within the server's origin a
// request follows, as an http.Client without CheckRedirect does.
const maxRedirects = 10

// ErrTooLarge is wrapped by the error of an answer, or of an event of
// the stream, larger than the client reads (WithMaxAnswerSize,
// MaxEventSize): errors.Is(err, client.ErrTooLarge) holds for it.
var ErrTooLarge = errors.New("client: the server sent more than the client reads")

// ErrOtherOrigin is wrapped by the error of a request that the server
// redirected to another origin (another scheme, host or port), which the
// client refuses to follow: it sends its API key to the server's origin
// only.
var ErrOtherOrigin = errors.New("client: a redirect to another origin is refused: the API key goes to the server's origin only")

// WithMaxAnswerSize sets how many bytes of a JSON answer's body the
// client reads at most (DefaultMaxAnswerSize, 64 MiB, unless set; n of 0
// or less keeps it). A larger answer is an error (ErrTooLarge, code
// prompts.CodeInternal) naming the limit, not retried; one whose
// Content-Length says so is refused before its body is read. A snapshot
// (Snapshot) is one such answer: a project whose snapshot is larger
// needs a larger limit.
func WithMaxAnswerSize(n int64) Option {
	return func(c *Client) {
		if n > 0 {
			c.maxAnswer = n
		}
	}
}

// readAnswer reads the body of an answer: at most limit bytes for a
// success, else an error naming the limit; at most maxProblemSize of an
// error answer (the problem is read from what fits).
func readAnswer(res *http.Response, limit int64) ([]byte, error) {
	if res.StatusCode >= 400 {
		return io.ReadAll(io.LimitReader(res.Body, maxProblemSize))
	}
	if res.ContentLength > limit {
		return nil, tooLarge("an answer", limit)
	}
	b, err := io.ReadAll(io.LimitReader(res.Body, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, tooLarge("an answer", limit)
	}
	return b, nil
}

// tooLarge is the error of what exceeds limit: what, and the limit.
func tooLarge(what string, limit int64) error {
	return &prompts.Error{Code: prompts.CodeInternal,
		Message: fmt.Sprintf("%s of the server exceeds the client's limit of %s", what, size(limit)), Err: ErrTooLarge}
}

// size says n bytes in the unit that says it exactly: "64 MiB", "1 KiB",
// "1000 bytes".
func size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// sameOrigin returns a copy of hc that follows redirects only within the
// origin of the request's first URL, then as hc's CheckRedirect says
// (or, without one, up to maxRedirects). Go's http.Client drops only
// Authorization, WWW-Authenticate and Cookie on a redirect to another
// host: X-API-Key would follow. hc itself is not changed.
func sameOrigin(hc *http.Client) *http.Client {
	cp := *hc
	next := hc.CheckRedirect
	cp.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if origin(req.URL) != origin(via[0].URL) {
			return &redirectError{to: shown(req.URL)}
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		return nil
	}
	return &cp
}

// origin is a URL's scheme, host and port, the port made explicit.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// shown is a URL as an error names it: without user information, query
// or fragment.
func shown(u *url.URL) string {
	c := *u
	c.User, c.RawQuery, c.ForceQuery, c.Fragment, c.RawFragment = nil, "", false, "", ""
	return c.String()
}

// redirectError is the CheckRedirect error of a redirect to another
// origin.
type redirectError struct{ to string }

func (e *redirectError) Error() string {
	return "the server redirected to " + e.to + ", another origin"
}

// refusedRedirect returns the error of a request that err (from
// http.Client.Do) says was redirected to another origin, or nil.
func refusedRedirect(err error) error {
	var re *redirectError
	if !errors.As(err, &re) {
		return nil
	}
	return &prompts.Error{Code: prompts.CodeInternal, Message: re.Error(), Err: ErrOtherOrigin}
}
