package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts/internal/tcpproxy"
)

// sseEvent is one event read from a stream.
type sseEvent struct {
	id   int64
	typ  string
	data map[string]any
	at   time.Time // when it arrived
}

// openStream opens the event stream of s (after the event after, or from
// the next when 0), and returns its events as they come; the channel
// closes with the stream.
func (s *server) openStream(t testing.TB, after int64) <-chan sseEvent {
	t.Helper()
	req, err := http.NewRequest("GET", s.base+"/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-Key", s.key)
	req.Header.Set("Accept", "text/event-stream")
	if after > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(after, 10))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("stream: %d", resp.StatusCode)
	}
	t.Cleanup(func() { resp.Body.Close() })
	events := make(chan sseEvent, 10000)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var e sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "id: "):
				e.id, _ = strconv.ParseInt(line[4:], 10, 64)
			case strings.HasPrefix(line, "event: "):
				e.typ = line[7:]
			case strings.HasPrefix(line, "data: "):
				_ = json.Unmarshal([]byte(line[6:]), &e.data)
			case line == "" && e.id != 0:
				e.at = time.Now()
				events <- e
				e = sseEvent{}
			}
		}
	}()
	return events
}

// Two servers on one database: a stream on one gets every event of the
// writes made through the other, in order, each once; a stream through
// a database link that is cut for a while pauses and goes on where it
// was, losing nothing.
func TestServerStreamsAcrossReplicas(t *testing.T) {
	is := is.New(t)
	dsn, schema := testDatabase(t)
	env := []string{"PROMPTS_DSN=" + dsn.String(), "PROMPTS_SCHEMA=" + schema, "PROMPTS_API_KEY=" + testKey}
	a := start(t, env)
	a.key = testKey
	proxy := tcpproxy.Start(t, dsn.Host)
	b := start(t, []string{"PROMPTS_DSN=" + via(dsn, proxy.Addr()), "PROMPTS_SCHEMA=" + schema, "PROMPTS_API_KEY=" + testKey})
	b.key = testKey
	stream := b.openStream(t, 0)
	p := a.newPrompt(t)
	const n = 20
	for i := range n {
		is.Equal(a.call(t, "POST", "/prompts/"+p.ID+"/versions", `{"content":"v`+strconv.Itoa(i)+`"}`, nil).StatusCode, 200)
	}
	proxy.Cut(true) // b loses its database; its stream stays open
	for i := range n {
		is.Equal(a.call(t, "POST", "/prompts/"+p.ID+"/versions", `{"content":"w`+strconv.Itoa(i)+`"}`, nil).StatusCode, 200)
	}
	// Real time: b (another process) must meet the cut while it lasts, and
	// nothing it sends says it has; a second is many of its retries.
	time.Sleep(time.Second)
	proxy.Cut(false)
	var got []sseEvent
	deadline := time.After(30 * time.Second)
	for len(got) < 1+2*n {
		select {
		case e, ok := <-stream:
			is.True(ok) // the stream survived the outage
			got = append(got, e)
		case <-deadline:
			t.Fatalf("the stream gave %d events of %d", len(got), 1+2*n)
		}
	}
	is.Equal(got[0].typ, "prompt.created")
	ids := make([]int64, len(got))
	for i, e := range got {
		ids[i] = e.id
		if i > 0 {
			is.Equal(e.typ, "version.created")
			is.Equal(int(e.data["data"].(map[string]any)["version_number"].(float64)), i) // every version, in order, once
		}
	}
	is.True(slices.IsSorted(ids))
	is.NoErr(a.stop(t))
	is.NoErr(b.stop(t))
}

// BenchmarkStreamPropagation measures the time from the answer to a write
// on one server to its event on a stream of another server on the same
// database, over b.N writes: p50 and p99 in ms.
func BenchmarkStreamPropagation(b *testing.B) {
	dsn, schema := testDatabase(b)
	env := []string{"PROMPTS_DSN=" + dsn.String(), "PROMPTS_SCHEMA=" + schema, "PROMPTS_API_KEY=" + testKey}
	w, r := start(b, env), start(b, env)
	w.key, r.key = testKey, testKey
	stream := r.openStream(b, 0)
	p := w.newPrompt(b)
	<-stream // prompt.created
	lags := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w.call(b, "POST", "/prompts/"+p.ID+"/versions", `{"content":"v`+strconv.Itoa(i)+`"}`, nil)
		answered := time.Now()
		e := <-stream
		lags = append(lags, e.at.Sub(answered))
	}
	b.StopTimer()
	sort.Slice(lags, func(i, j int) bool { return lags[i] < lags[j] })
	b.ReportMetric(float64(lags[len(lags)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lags[len(lags)*99/100].Microseconds())/1000, "p99-ms")
	_ = w.stop(b)
	_ = r.stop(b)
}
