package webhook

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/matryer/is"
)

func TestClientTakesNoProxy(t *testing.T) {
	is := is.New(t)
	// A proxy would connect to the receiver for the dispatcher: the
	// address checked would be the proxy's.
	t.Setenv("HTTP_PROXY", "http://8.8.8.8:3128")
	t.Setenv("HTTPS_PROXY", "http://8.8.8.8:3128")
	for _, private := range []bool{false, true} {
		tr := newClient(private).Transport.(*http.Transport)
		is.True(tr.Proxy == nil) // no proxy, whatever the environment says
	}
}

func TestClientChecksTheAddressItDials(t *testing.T) {
	is := is.New(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	for _, u := range []string{srv.URL, "http://localhost" + port} {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, u, nil)
		is.NoErr(err)
		_, err = newClient(false).Do(req)
		var refusal *errRefused
		is.True(errors.As(err, &refusal)) // refused by the dialer, after DNS
		is.Equal(refusal.ip.String(), "127.0.0.1")

		resp, err := newClient(true).Do(req)
		is.NoErr(err) // reached when private addresses are allowed
		_ = resp.Body.Close()
	}
}

// An attempt's error is kept to maxError bytes, cut between characters,
// so that its record stays small.
func TestAttemptErrorIsClipped(t *testing.T) {
	is := is.New(t)
	is.Equal(clip("connection refused", maxError), "connection refused") // short: whole
	long := strings.Repeat("x", maxError-1) + "é and more"
	got := clip(long, maxError)
	is.Equal(got, strings.Repeat("x", maxError-1)) // not half a character
	is.Equal(len(clip(strings.Repeat("y", 10_000), maxError)), maxError)
}
