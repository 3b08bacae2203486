package client_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/client"
)

// fast retries at once, so that the tests do not wait.
var fast = client.WithRetry(client.RetryPolicy{MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond})

// Every write that creates carries an Idempotency-Key (the caller's, or
// one the client makes) and is retried when its answer is lost after the
// server did it: the retry is a replay, and the work is done once.
func TestAWriteWhoseAnswerIsLostIsDoneOnce(t *testing.T) {
	ctx := t.Context()
	for _, key := range []string{"", "callers-key"} {
		t.Run("key="+key, func(t *testing.T) {
			is := is.New(t)
			s := newServer(t)
			direct := s.client(t)
			proj, err := direct.CreateProject(ctx, prompts.NewProject{Name: "P"})
			is.NoErr(err)
			px := newProxy(t, s.URL)
			idem := func(write string) prompts.Idempotency { // one key a write
				if key == "" {
					return prompts.Idempotency{} // the client makes one
				}
				return prompts.Idempotency{Key: key + "-" + write}
			}
			// Each call on a client of its own, so that its first attempt
			// takes a new connection, whose answer the proxy drops.
			lossy := func() *client.Client {
				px.dropAnswers(1)
				return newClient(t, px.URL(), adminKey, fast)
			}
			before := px.accepted.Load()

			p, err := lossy().CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "K", Idempotency: idem("prompt")})
			is.NoErr(err)                                 // the retry answered
			is.True(p.Replayed)                           // as a replay of the first attempt
			is.Equal(px.accepted.Load()-before, int64(2)) // two attempts
			list, _, err := direct.ListPrompts(ctx, prompts.PromptFilter{ProjectIDs: []string{proj.ID}})
			is.NoErr(err)
			is.Equal(len(list), 1) // one prompt

			for i := range 2 {
				v, err := lossy().CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "c", Environments: []prompts.Environment{prompts.Production},
					Idempotency: idem("version-" + strconv.Itoa(i))})
				is.NoErr(err)
				is.True(v.Replayed)
				is.Equal(v.VersionNumber, i+1) // no duplicate: numbers follow
			}
			vs, _, err := direct.ListVersions(ctx, p.ID, prompts.Page{})
			is.NoErr(err)
			is.Equal(len(vs), 2) // one version each

			a, err := lossy().Rollback(ctx, prompts.Rollback{PromptID: p.ID, Environment: prompts.Production, Idempotency: idem("rollback")})
			is.NoErr(err)
			is.True(a.Replayed)
			is.Equal(a.ActiveVersion.VersionNumber, 1) // rolled back once: a second rollback would be at 2
			ds, _, err := direct.ListDeployments(ctx, prompts.DeploymentFilter{PromptID: p.ID})
			is.NoErr(err)
			is.Equal(len(ds), 3) // two activations and one rollback
		})
	}
}

// A PATCH sets values: repeated after a lost answer, it changes nothing
// more, so it is retried.
func TestAnUpdateWhoseAnswerIsLostIsRetried(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	s := newServer(t)
	direct := s.client(t)
	proj, _ := direct.CreateProject(ctx, prompts.NewProject{Name: "P"})
	p, _ := direct.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "K"})
	px := newProxy(t, s.URL)
	px.dropAnswers(1)
	u, err := newClient(t, px.URL(), adminKey, fast).UpdatePrompt(ctx, p.ID, prompts.PromptUpdate{Name: prompts.Some("New")})
	is.NoErr(err) // retried
	is.Equal(u.Name, "New")
	is.Equal(px.accepted.Load(), int64(2))
}

// CreateProject takes no Idempotency-Key: once sent, it is not retried
// (a repeat would find its slug taken), but a connection that could not
// be made is.
func TestCreateProjectIsRetriedOnlyWhenUnsent(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	s := newServer(t)
	px := newProxy(t, s.URL)
	px.dropAnswers(1)
	_, err := newClient(t, px.URL(), adminKey, fast).CreateProject(ctx, prompts.NewProject{Name: "P"})
	is.True(errors.Is(err, prompts.ErrUnavailable)) // the answer was lost
	is.Equal(px.accepted.Load(), int64(1))          // and not asked again
	list, _, err := s.client(t).ListProjects(ctx, prompts.ProjectFilter{})
	is.NoErr(err)
	is.Equal(len(list), 1) // the server made it: the caller must look

	var dials atomic.Int64
	tr := http.DefaultTransport.(*http.Transport).Clone()
	var d net.Dialer
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if dials.Add(1) == 1 {
			return nil, &net.OpError{Op: "dial", Net: network, Err: errors.New("connection refused")}
		}
		return d.DialContext(ctx, network, addr)
	}
	p, err := newClient(t, s.URL, adminKey, fast, client.WithHTTPClient(&http.Client{Transport: tr})).CreateProject(ctx, prompts.NewProject{Name: "Q"})
	is.NoErr(err) // retried: the first connection could not be made
	is.Equal(p.Name, "Q")
	is.Equal(dials.Load(), int64(2))
}

// failing answers the first n requests to paths with this suffix with
// status and Retry-After, and records when each request came.
type failing struct {
	mu     sync.Mutex
	n      int
	status int
	after  string
	suffix string
	times  []time.Time
}

func (f *failing) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, f.suffix) {
			next.ServeHTTP(w, r)
			return
		}
		f.mu.Lock()
		f.times = append(f.times, time.Now())
		fail := f.n > 0
		if fail {
			f.n--
		}
		f.mu.Unlock()
		if !fail {
			next.ServeHTTP(w, r)
			return
		}
		if f.after != "" {
			w.Header().Set("Retry-After", f.after)
		}
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(f.status)
		_, _ = w.Write([]byte(`{"type":"about:blank","title":"Service Unavailable","status":503,"detail":"the service is unavailable for a moment; retry later","code":"unavailable"}`))
	})
}

func (f *failing) set(n int, after string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n, f.after, f.times = n, after, nil
}

func (f *failing) attempts() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.times...)
}

// A 503 is retried after at least what its Retry-After asks, within the
// call's context: a wait that would outlast the context's deadline is not
// begun.
func TestRetryAfterIsHonoured(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	f := &failing{status: http.StatusServiceUnavailable, suffix: "/projects"}
	s := newServerWith(t, setup{wrap: f.wrap})
	cl := s.client(t, fast)

	f.set(1, "1")
	_, _, err := cl.ListProjects(ctx, prompts.ProjectFilter{})
	is.NoErr(err) // the retry succeeded
	at := f.attempts()
	is.Equal(len(at), 2)
	is.True(at[1].Sub(at[0]) >= 990*time.Millisecond) // after the second Retry-After asked, not the 1 ms backoff

	f.set(1, "1")
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, err = cl.ListProjects(short, prompts.ProjectFilter{})
	is.True(errors.Is(err, prompts.ErrUnavailable))           // the 503's error
	is.Equal(prompts.ErrorCode(err), prompts.CodeUnavailable) //
	is.True(time.Since(start) < 250*time.Millisecond)         // at once: the wait would outlast the deadline
	is.Equal(len(f.attempts()), 1)                            // one attempt

	f.set(10, "")
	_, _, err = s.client(t, client.WithRetry(client.RetryPolicy{MaxAttempts: 3, MinBackoff: time.Millisecond})).ListProjects(ctx, prompts.ProjectFilter{})
	var e *prompts.Error
	is.True(errors.As(err, &e))
	is.Equal(e.Code, prompts.CodeUnavailable)
	is.Equal(e.Message, "the service is unavailable for a moment; retry later") // the problem's detail
	is.Equal(len(f.attempts()), 3)                                              // MaxAttempts
	f.set(10, "")
	_, _, err = s.client(t, client.WithRetry(client.RetryPolicy{MaxAttempts: 1})).ListProjects(ctx, prompts.ProjectFilter{})
	is.True(errors.Is(err, prompts.ErrUnavailable))
	is.Equal(len(f.attempts()), 1) // 1 turns retries off
}

// An attempt that takes longer than AttemptTimeout is abandoned and
// retried; the caller's context ending is not.
func TestATimedOutAttemptIsRetried(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	var slow atomic.Int64
	s := newServerWith(t, setup{wrap: func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/projects") && slow.Add(-1) >= 0 {
				select {
				case <-time.After(5 * time.Second):
				case <-r.Context().Done():
				}
			}
			next.ServeHTTP(w, r)
		})
	}})
	cl := s.client(t, client.WithRetry(client.RetryPolicy{MinBackoff: time.Millisecond, AttemptTimeout: 100 * time.Millisecond}))
	slow.Store(1)
	_, _, err := cl.ListProjects(ctx, prompts.ProjectFilter{})
	is.NoErr(err) // the second attempt answered
	is.Equal(len(s.requests()), 2)

	slow.Store(1)
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, _, err = cl.ListProjects(short, prompts.ProjectFilter{})
	is.True(errors.Is(err, context.DeadlineExceeded)) // the caller's deadline
	is.True(errors.Is(err, prompts.ErrUnavailable))   // as every Store says it
	is.Equal(len(s.requests()), 1)                    // not retried
}
