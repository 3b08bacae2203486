package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/internal/poll"
)

// frame is one server-sent event, or a comment.
type frame struct {
	id, event, data string
	comment         string
}

// sseStream is an open event stream: its frames come on a channel, read
// by a goroutine of the test.
type sseStream struct {
	t      *testing.T
	res    *http.Response
	cancel context.CancelFunc
	frames chan frame
	done   chan struct{} // closed when the body ended
}

// openStream asks for the event stream with key and query (and header
// name and value pairs). A 200 is an open stream, closed at the test's
// end; anything else is answered as a resp.
func (e *env) openStream(t *testing.T, key, query string, hdr ...string) (resp, *sseStream) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	u := e.srv.URL + e.prefix + "/v1/integration/events"
	if query != "" {
		u += "?" + query
	}
	req, err := http.NewRequestWithContext(ctx, "GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-Key", key)
	req.Header.Set("Accept", "text/event-stream")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if res.StatusCode != 200 {
		defer cancel()
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		checkResponse(t, req, e.prefix, res.StatusCode, res.Header, b)
		return resp{status: res.StatusCode, header: res.Header, body: b, url: req.URL}, nil
	}
	s := &sseStream{t: t, res: res, cancel: cancel, frames: make(chan frame, 4096), done: make(chan struct{})}
	go s.read()
	t.Cleanup(s.close)
	checkResponse(t, req, e.prefix, res.StatusCode, res.Header, nil)
	return resp{status: 200, header: res.Header, url: req.URL}, s
}

// read parses the stream as the WHATWG HTML standard says, for the
// fields this interface sends.
func (s *sseStream) read() {
	defer close(s.done)
	defer close(s.frames)
	br := bufio.NewReader(s.res.Body)
	var f frame
	var data []string
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			f.data = strings.Join(data, "\n")
			s.frames <- f
			f, data = frame{}, nil
		case strings.HasPrefix(line, ":"):
			f.comment = strings.TrimSpace(line[1:])
		default:
			name, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch name {
			case "id":
				f.id = value
			case "event":
				f.event = value
			case "data":
				data = append(data, value)
			default:
				s.t.Errorf("unknown field in the stream: %q", line)
			}
		}
	}
}

func (s *sseStream) close() {
	s.cancel()
	s.res.Body.Close()
	<-s.done
}

// next returns the next frame, comments included; it fails the test
// when none comes within d or the stream ended.
func (s *sseStream) next(d time.Duration) frame {
	s.t.Helper()
	select {
	case f, ok := <-s.frames:
		if !ok {
			s.t.Fatal("the stream ended")
		}
		return f
	case <-time.After(d):
		s.t.Fatalf("no frame within %v", d)
	}
	return frame{}
}

// event returns the next event, skipping comments.
func (s *sseStream) event() frame {
	s.t.Helper()
	for {
		if f := s.next(5 * time.Second); f.comment == "" {
			return f
		}
	}
}

// quiet checks that no event comes within d.
func (s *sseStream) quiet(d time.Duration) {
	s.t.Helper()
	deadline := time.After(d)
	for {
		select {
		case f, ok := <-s.frames:
			if ok && f.comment == "" {
				s.t.Fatalf("an unexpected event: %+v", f)
			}
		case <-deadline:
			return
		}
	}
}

// ended reports whether the body ends within d.
func (s *sseStream) ended(d time.Duration) bool {
	select {
	case <-s.done:
		return true
	case <-time.After(d):
		return false
	}
}

// decode returns an event's data, which must be one JSON object on one
// line, that agrees with its id and event fields.
func (f frame) decode(t *testing.T) map[string]any {
	t.Helper()
	if strings.Contains(f.data, "\n") {
		t.Fatalf("data on several lines: %q", f.data)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(f.data), &m); err != nil {
		t.Fatalf("data is not JSON: %v: %q", err, f.data)
	}
	if m["id"] != f.id || m["type"] != f.event {
		t.Fatalf("frame id %q event %q, data %s", f.id, f.event, f.data)
	}
	return m
}

func (f frame) num(t *testing.T) int64 {
	t.Helper()
	n, err := strconv.ParseInt(f.id, 10, 64)
	if err != nil {
		t.Fatalf("frame id %q", f.id)
	}
	return n
}

func TestStreamSendsEachEventAsItComes(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	needEvents(t, e.store)
	before := e.do("GET", "/v1/integration/events", "").arr(t)
	r, s := e.openStream(t, e.key, "")
	is.Equal(r.header.Get("Content-Type"), "text/event-stream")
	is.Equal(r.header.Get("Cache-Control"), "no-cache")
	is.Equal(r.header.Get("X-Accel-Buffering"), "no")

	p := e.newPrompt(e.project.ID) // from the next event: nothing before
	f := s.event()
	is.Equal(f.event, "prompt.created")
	ev := f.decode(t)
	is.Equal(keysOf(ev), eventFields)
	is.Equal(ev["prompt_id"], p["id"])
	is.True(f.num(t) > eventIDs(t, before)[len(before)-1])

	// A version made active in two environments: the version first,
	// then its records, in the order of their ids.
	e.newVersion(p["id"].(string), `{"content":"x","environments":["production","staging"]}`)
	var types []string
	last := f.num(t)
	for range 3 {
		f := s.event()
		is.True(f.num(t) > last)
		last = f.num(t)
		types = append(types, f.event)
		f.decode(t)
	}
	is.Equal(types, []string{"version.created", "deployment.created", "deployment.created"})
	// The JSON list says the same.
	list := e.do("GET", "/v1/integration/events?after="+strconv.FormatInt(eventIDs(t, before)[len(before)-1], 10), "").arr(t)
	is.Equal(len(list), 4)
}

// A client that reconnects with Last-Event-ID (or after) gets what it
// missed, nothing twice, nothing lost; Last-Event-ID wins over after.
func TestStreamResumesWhereItLeft(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	needEvents(t, e.store)
	_, s := e.openStream(t, e.key, "")
	id := e.newPrompt(e.project.ID)["id"].(string)
	seen := s.event()
	s.close()
	for i := range 5 {
		e.newVersion(id, `{"content":"v`+strconv.Itoa(i)+`"}`)
	}
	want := eventIDs(t, e.do("GET", "/v1/integration/events?after="+seen.id, "").arr(t))
	is.Equal(len(want), 5)

	for _, c := range []struct {
		name  string
		query string
		hdr   []string
	}{
		{"Last-Event-ID", "", []string{"Last-Event-ID", seen.id}},
		{"after", "after=" + seen.id, nil},
		{"Last-Event-ID over after", "after=1", []string{"Last-Event-ID", seen.id}},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			_, s := e.openStream(t, e.key, c.query, c.hdr...)
			var got []int64
			for range want {
				got = append(got, s.event().num(t))
			}
			is.Equal(got, want)
			s.quiet(50 * time.Millisecond) // nothing more
		})
	}
	bad, _ := e.openStream(t, e.key, "", "Last-Event-ID", "x")
	is.Equal(bad.status, 400)
	is.Equal(fieldsOf(t, bad), []string{"Last-Event-ID"})
}

// A key's stream carries its projects' events only.
func TestStreamOfTheKeysProjectsOnly(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	needEvents(t, e.store)
	_, own := e.openStream(t, e.ownKey, "")
	_, other := e.openStream(t, e.otherKey, "")
	_, all := e.openStream(t, e.key, "")
	_, named := e.openStream(t, e.key, "project_id="+e.other.ID)
	hidden, _ := e.openStream(t, e.ownKey, "project_id="+e.other.ID)
	is.Equal(hidden.status, 404)

	mine := e.newPrompt(e.project.ID)["id"].(string)
	e.newVersion(mine, `{"content":"a"}`)
	theirs := e.newPrompt(e.other.ID)["id"].(string)

	is.Equal(own.event().decode(t)["prompt_id"], mine)
	is.Equal(own.event().event, "version.created")
	is.Equal(other.event().decode(t)["prompt_id"], theirs) // the first it gets: none of the other project's
	is.Equal(named.event().decode(t)["prompt_id"], theirs)
	for _, want := range []string{mine, mine, theirs} {
		is.Equal(all.event().decode(t)["prompt_id"], want)
	}
	own.quiet(50 * time.Millisecond)
}

func TestStreamKeepAlive(t *testing.T) {
	is := is.New(t)
	e := newEnvWith(t, setup{opts: []httpapi.Option{httpapi.WithStreamKeepAlive(30 * time.Millisecond)}})
	needEvents(t, e.store)
	_, s := e.openStream(t, e.key, "")
	start := time.Now()
	for range 3 {
		f := s.next(time.Second)
		is.Equal(f.comment, "keep-alive")
		is.Equal(f.id, "")
	}
	is.True(time.Since(start) < time.Second) // every 30 ms or so
	e.newPrompt(e.project.ID)
	is.Equal(s.event().event, "prompt.created") // events still come
}

// Accept names text/event-stream: the stream; otherwise the JSON list.
func TestStreamIsChosenByAccept(t *testing.T) {
	e := newEnv(t)
	needEvents(t, e.store)
	for _, c := range []struct {
		accept string
		stream bool
	}{
		{"", false},
		{"*/*", false},
		{"application/json", false},
		{"text/event-stream", true},
		{"application/json, text/event-stream", true},
		{"TEXT/Event-Stream; charset=utf-8", true},
		{"text/event-stream;q=0", false},
		{"text/*", false},
	} {
		t.Run(c.accept, func(t *testing.T) {
			is := is.New(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+"/v1/integration/events", nil)
			req.Header.Set("X-API-Key", e.key)
			if c.accept != "" {
				req.Header.Set("Accept", c.accept)
			}
			res, err := http.DefaultClient.Do(req)
			is.NoErr(err)
			defer res.Body.Close()
			is.Equal(res.StatusCode, 200)
			ct := map[bool]string{true: "text/event-stream", false: "application/json"}[c.stream]
			is.Equal(res.Header.Get("Content-Type"), ct)
		})
	}
	is := is.New(t)
	head := e.do("HEAD", "/v1/integration/events", "", "Accept", "text/event-stream")
	is.Equal(head.status, 200) // a HEAD gets the headers, and ends
	is.Equal(head.header.Get("Content-Type"), "text/event-stream")
}

// counting counts the requests its handler is serving.
type counting struct {
	h       http.Handler
	serving atomic.Int64
}

func (c *counting) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.serving.Add(1)
	defer c.serving.Add(-1)
	c.h.ServeHTTP(w, r)
}

// waitFor polls cond for up to d.
func waitFor(d time.Duration, cond func() bool) bool { return poll.Until(d, cond) }

// CloseStreams ends every stream at once and refuses new ones (503); the
// rest of the interface goes on. A client that leaves frees its handler.
func TestCloseStreamsAndLeavingClients(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	needEvents(t, e.store)
	h := httpapi.New(e.store, httpapi.WithAuthenticator(newKeysFor(t, e.key)))
	c := &counting{h: h}
	e2 := *e
	e2.srv = httptest.NewServer(c)
	t.Cleanup(e2.srv.Close)
	e2.client = &http.Client{Transport: validating{t: t}}

	_, leaving := e2.openStream(t, e.key, "")
	var streams []*sseStream
	for range 3 {
		_, s := e2.openStream(t, e.key, "")
		streams = append(streams, s)
	}
	is.Equal(c.serving.Load(), int64(4))
	leaving.close()
	is.True(waitFor(time.Second, func() bool { return c.serving.Load() == 3 })) // its handler returned

	start := time.Now()
	h.CloseStreams()
	for _, s := range streams {
		is.True(s.ended(time.Second)) // every stream ends
	}
	is.True(time.Since(start) < time.Second)
	is.True(waitFor(time.Second, func() bool { return c.serving.Load() == 0 }))
	r, _ := e2.openStream(t, e.key, "")
	is.Equal(r.status, 503)
	is.Equal(r.header.Get("Retry-After"), "1")
	is.Equal(e2.do("GET", "/v1/integration/events", "").status, 200) // the JSON list still answers
	h.CloseStreams()                                                 // twice is fine
}

// collect returns the ids of the next n events of the stream.
func (s *sseStream) collect(n int) []int64 {
	s.t.Helper()
	out := make([]int64, 0, n)
	for range n {
		out = append(out, s.event().num(s.t))
	}
	return out
}

// logIDs returns the ids of every event after the id after that key sees,
// through the JSON list.
func (e *env) logIDs(t *testing.T, key string, after int64) []int64 {
	t.Helper()
	var out []int64
	path := "/v1/integration/events?limit=1000"
	if after > 0 {
		path += "&after=" + strconv.FormatInt(after, 10)
	}
	r := e.call(key, "GET", path, "")
	for {
		out = append(out, eventIDs(t, r.arr(t))...)
		next := r.next(t)
		if next == nil {
			return out
		}
		r = e.call(key, "GET", strings.TrimPrefix(next.String(), e.srv.URL), "")
	}
}

// A stream that starts before the tail the streams share reads the store
// until it reaches it, then goes on from the tail: nothing lost, nothing
// twice.
func TestStreamBehindTheTailCatchesUp(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	needEvents(t, e.store)
	_, first := e.openStream(t, e.key, "") // the tail starts here
	id := e.newPrompt(e.project.ID)["id"].(string)
	for i := range 10 {
		e.newVersion(id, `{"content":"`+itoa(i)+`"}`)
	}
	is.Equal(len(first.collect(11)), 11)
	_, late := e.openStream(t, e.ownKey, "after=1") // the first project's event
	want := e.logIDs(t, e.ownKey, 1)
	is.Equal(late.collect(len(want)), want) // from the store
	e.newVersion(id, `{"content":"more"}`)
	more := e.logIDs(t, e.ownKey, want[len(want)-1])
	is.Equal(len(more), 1)
	is.Equal(late.collect(1), more) // from the tail
	late.quiet(50 * time.Millisecond)
}

// eventCounting counts the events its event log returns to ListEvents.
type eventCounting struct {
	prompts.Store
	read atomic.Int64
}

func (c *eventCounting) ListEvents(ctx context.Context, f prompts.EventFilter) ([]prompts.Event, bool, error) {
	page, more, err := c.Store.(prompts.EventLog).ListEvents(ctx, f)
	c.read.Add(int64(len(page)))
	return page, more, err
}

func (c *eventCounting) WaitEvents(ctx context.Context, after int64) error {
	return c.Store.(prompts.EventLog).WaitEvents(ctx, after)
}

func (c *eventCounting) LastEventID(ctx context.Context) (int64, error) {
	return c.Store.(prompts.EventLog).LastEventID(ctx)
}

// A stream of a key of some projects that is behind the tail reads their
// events from the store, not every other project's with them.
func TestStreamBehindTheTailReadsItsProjectsOnly(t *testing.T) {
	is := is.New(t)
	c := &eventCounting{}
	e := newEnvWith(t, setup{store: func(s prompts.Store) prompts.Store { c.Store = s; return c }})
	needEvents(t, e.store)
	ctx := context.Background()
	own := e.newPrompt(e.project.ID)["id"].(string)
	p, err := e.store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: e.other.ID, Key: "busy", Name: "Busy"})
	is.NoErr(err)
	for i := range 2000 {
		_, err := e.store.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "v" + itoa(i)})
		is.NoErr(err)
	}
	e.newVersion(own, `{"content":"mine"}`)
	want := e.logIDs(t, e.ownKey, 1) // after the project's event
	is.Equal(len(want), 2)
	c.read.Store(0)
	_, s := e.openStream(t, e.ownKey, "after=1")
	is.Equal(s.collect(len(want)), want)
	is.True(c.read.Load() <= int64(len(want))) // the others' 2,001 events stay in the store
}

// A burst larger than the tail holds reaches every stream whole, in
// order: a stream that fell behind reads the store.
func TestStreamBurstLargerThanTheTail(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	needEvents(t, e.store)
	_, all := e.openStream(t, e.key, "")
	_, own := e.openStream(t, e.ownKey, "")
	_, other := e.openStream(t, e.otherKey, "")
	start := e.logIDs(t, e.key, 0)
	last := start[len(start)-1]
	ctx := context.Background()
	p, err := e.store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: e.project.ID, Key: "burst", Name: "Burst"})
	is.NoErr(err)
	for i := range 1500 {
		_, err := e.store.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "v" + itoa(i)})
		is.NoErr(err)
	}
	q, err := e.store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: e.other.ID, Key: "after", Name: "After"})
	is.NoErr(err)
	want := e.logIDs(t, e.key, last)
	is.Equal(len(want), 1502)
	is.Equal(all.collect(len(want)), want)
	ownWant := e.logIDs(t, e.ownKey, last)
	is.Equal(len(ownWant), 1501)
	is.Equal(own.collect(len(ownWant)), ownWant)
	f := other.event() // nothing of the burst: the other project's prompt comes first
	is.Equal(f.decode(t)["prompt_id"], q.ID)
}

// flaky is a store whose event log can be made unavailable.
type flaky struct {
	prompts.Store
	down atomic.Bool
}

var errDown = prompts.Unavailable(io.ErrUnexpectedEOF)

func (f *flaky) ListEvents(ctx context.Context, ef prompts.EventFilter) ([]prompts.Event, bool, error) {
	if f.down.Load() {
		return nil, false, errDown
	}
	return f.Store.(prompts.EventLog).ListEvents(ctx, ef)
}

func (f *flaky) WaitEvents(ctx context.Context, after int64) error {
	if f.down.Load() {
		return errDown
	}
	return f.Store.(prompts.EventLog).WaitEvents(ctx, after)
}

func (f *flaky) LastEventID(ctx context.Context) (int64, error) {
	if f.down.Load() {
		return 0, errDown
	}
	return f.Store.(prompts.EventLog).LastEventID(ctx)
}

// While the event log is unavailable, a stream stays open (keep-alives
// going on) and pauses; then it goes on where it was. A new stream is 503
// meanwhile.
func TestStreamSurvivesAnOutage(t *testing.T) {
	is := is.New(t)
	f := &flaky{}
	e := newEnvWith(t, setup{
		store: func(s prompts.Store) prompts.Store { f.Store = s; return f },
		opts:  []httpapi.Option{httpapi.WithStreamKeepAlive(40 * time.Millisecond)},
	})
	needEvents(t, e.store)
	_, s := e.openStream(t, e.key, "")
	f.down.Store(true)
	for range 3 {
		e.newPrompt(e.project.ID)
	}
	deadline := time.Now().Add(300 * time.Millisecond)
	for time.Now().Before(deadline) {
		is.Equal(s.next(time.Second).comment, "keep-alive") // open, and quiet
	}
	r, _ := e.openStream(t, e.key, "")
	is.Equal(r.status, 503)
	f.down.Store(false)
	want := e.logIDs(t, e.key, 2) // after the projects'
	is.Equal(len(want), 3)
	is.Equal(s.collect(3), want) // nothing lost
	s.quiet(50 * time.Millisecond)
}

// Through a cache, the stream and the list are the store's.
func TestEventsThroughACache(t *testing.T) {
	is := is.New(t)
	e := newEnvWith(t, setup{store: func(s prompts.Store) prompts.Store { return cache.New(s, cache.Standalone()) }})
	needEvents(t, e.store)
	_, s := e.openStream(t, e.key, "")
	e.newPrompt(e.project.ID)
	is.Equal(s.event().event, "prompt.created")
	is.Equal(len(e.do("GET", "/v1/integration/events", "").arr(t)), 3)
}

// Each write moves the connection's write deadline on: a server's
// WriteTimeout, meant for ordinary answers, does not cut a stream.
func TestStreamOutlivesTheWriteTimeout(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	needEvents(t, e.store)
	h := httpapi.New(e.store, httpapi.WithAuthenticator(newKeysFor(t, e.key)), httpapi.WithStreamKeepAlive(20*time.Millisecond))
	srv := httptest.NewUnstartedServer(h)
	srv.Config.WriteTimeout = 100 * time.Millisecond
	srv.Start()
	t.Cleanup(srv.Close)
	e2 := *e
	e2.srv = srv
	_, s := e2.openStream(t, e.key, "")
	// The stream, a server's real connection, is the clock: its
	// keep-alives for 400 ms, four times the WriteTimeout.
	for end := time.Now().Add(400 * time.Millisecond); time.Now().Before(end); {
		is.Equal(s.next(time.Second).comment, "keep-alive") // open, and kept alive
	}
	e.newPrompt(e.project.ID)
	is.Equal(s.event().event, "prompt.created") // still open, long after 100 ms
}

// early is a store whose WaitEvents returns at once, as its contract
// allows: "events may have been appended".
type early struct {
	prompts.Store
	mu    sync.Mutex
	waits []time.Time // when WaitEvents was called
}

func (s *early) ListEvents(ctx context.Context, f prompts.EventFilter) ([]prompts.Event, bool, error) {
	return s.Store.(prompts.EventLog).ListEvents(ctx, f)
}

func (s *early) WaitEvents(ctx context.Context, after int64) error {
	s.mu.Lock()
	s.waits = append(s.waits, time.Now())
	s.mu.Unlock()
	return ctx.Err()
}

func (s *early) LastEventID(ctx context.Context) (int64, error) {
	return s.Store.(prompts.EventLog).LastEventID(ctx)
}

// A store that wakes the streams for nothing costs a wait a few
// milliseconds, not a spin; events still come. (Twenty-one waits have at
// least twenty pauses of 2 ms between them, however slow the machine.)
func TestStreamOverAStoreThatWakesEarly(t *testing.T) {
	is := is.New(t)
	st := &early{}
	e := newEnvWith(t, setup{store: func(s prompts.Store) prompts.Store { st.Store = s; return st }})
	needEvents(t, e.store)
	_, s := e.openStream(t, e.key, "")
	_, s2 := e.openStream(t, e.key, "")
	var twenty time.Duration
	is.True(waitFor(10*time.Second, func() bool {
		st.mu.Lock()
		defer st.mu.Unlock()
		if len(st.waits) < 21 {
			return false
		}
		twenty = st.waits[20].Sub(st.waits[0])
		return true
	})) // the streams wait on the store again and again
	is.True(twenty >= 20*2*time.Millisecond) // about one each 2 ms, not a spin
	e.newPrompt(e.project.ID)
	is.Equal(s.event().event, "prompt.created")
	is.Equal(s2.event().event, "prompt.created")
}
