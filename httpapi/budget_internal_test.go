package httpapi

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
	"github.com/promptkit/prompts/memstore"
)

const budgetKey = "budget-test-key-0"

// budgetServer serves a handler with opts over a memstore holding a
// project, and returns them. Its connections have small socket buffers,
// so that a client that stops reading soon stops the server's writes.
func budgetServer(t *testing.T, opts ...Option) (*Handler, *httptest.Server, *memstore.Store, prompts.Project) {
	t.Helper()
	ms := memstore.New()
	p, err := ms.CreateProject(context.Background(), prompts.NewProject{Name: "Budget"})
	if err != nil {
		t.Fatal(err)
	}
	keys := NewKeys()
	if err := keys.Add(Key{Name: "k", Role: RoleAdmin, Secret: budgetKey}); err != nil {
		t.Fatal(err)
	}
	h := New(ms, append([]Option{WithAuthenticator(keys)}, opts...)...)
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = smallBuffers{srv.Listener}
	srv.Start()
	t.Cleanup(srv.Close)
	return h, srv, ms, p
}

// smallBuffers gives the connections it accepts a small send buffer.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(32 << 10)
	}
	return c, err
}

// slowReader is a client that asked for path and reads its answer only
// when told to.
type slowReader struct {
	conn   net.Conn
	br     *bufio.Reader
	res    *http.Response
	status int
}

func openSlow(t *testing.T, srv *httptest.Server, path string) *slowReader {
	t.Helper()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.(*net.TCPConn).SetReadBuffer(32 << 10)
	req, _ := http.NewRequest("GET", srv.URL+path, nil)
	req.Header.Set("X-API-Key", budgetKey)
	if err := req.Write(conn); err != nil {
		t.Fatal(err)
	}
	s := &slowReader{conn: conn, br: bufio.NewReaderSize(conn, 4<<10)}
	if s.res, err = http.ReadResponse(s.br, req); err != nil {
		t.Fatal(err)
	}
	s.status = s.res.StatusCode
	return s
}

// heap returns the bytes of live objects, after a collection.
func heap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// bigProject adds prompts to the project until its snapshot holds about
// size bytes: prompts of 64 KiB active in production.
func bigProject(t *testing.T, ms *memstore.Store, projectID string, size int) {
	t.Helper()
	ctx := context.Background()
	for i := range size / (64 << 10) {
		p, err := ms.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: projectID, Key: "k" + strconv.Itoa(i), Name: "N"})
		if err != nil {
			t.Fatal(err)
		}
		content := strings.Repeat(strconv.Itoa(i%10), 64<<10)
		if _, err := ms.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: content, Environments: []prompts.Environment{prompts.Production}}); err != nil {
			t.Fatal(err)
		}
	}
}

// 32 slow readers of a 2 MiB snapshot, each stopped after its first
// 128 KiB, leave the server holding a small part of 32 snapshots: it
// writes a snapshot as it reads it. Then each reads the rest: a whole
// snapshot, and nothing is counted as being written any more.
func TestSlowReadersOfASnapshotHoldLittle(t *testing.T) {
	is := is.New(t)
	h, srv, ms, p := budgetServer(t)
	const size, readers = 2 << 20, 32
	bigProject(t, ms, p.ID, size)
	path := "/v1/integration/projects/" + p.ID + "/snapshot"
	before := heap()
	slow := make([]*slowReader, readers)
	for i := range slow {
		slow[i] = openSlow(t, srv, path)
		is.Equal(slow[i].status, 200)
		_, err := io.ReadFull(slow[i].res.Body, make([]byte, 128<<10))
		is.NoErr(err) // the first part
	}
	held := int64(heap()) - int64(before)
	t.Logf("32 readers of a %d-byte snapshot, stalled: the heap grew by %d bytes; %d counted as being written", size, held, h.budget.used.Load())
	is.True(held < readers*size/4) // not 32 snapshots: 64 MiB; about 32 chunks and prompts
	var wg sync.WaitGroup
	errs := make(chan error, readers)
	for _, s := range slow {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rest, err := io.ReadAll(s.res.Body)
			if err == nil && len(rest) < size/2 {
				err = io.ErrUnexpectedEOF
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		is.NoErr(err) // the rest came
	}
	whole := openSlow(t, srv, path)
	b, err := io.ReadAll(whole.res.Body)
	is.NoErr(err)
	s, err := cache.ParseSnapshot(b)
	is.NoErr(err) // a snapshot
	is.Equal(len(s.Prompts), size/(64<<10))
	is.Equal(h.budget.used.Load(), int64(0)) // nothing held
}

// With little memory for answers, readers that hold it make the next
// reads 503 with Retry-After, until they are done; the answers of
// changes are never refused.
func TestReadsPastTheAnswerMemoryAre503(t *testing.T) {
	is := is.New(t)
	h, srv, ms, p := budgetServer(t, WithMaxAnswerMemory(256<<10))
	bigProject(t, ms, p.ID, 1<<20)
	ctx := context.Background()
	pr, err := ms.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: p.ID, Key: "text", Name: "Text"})
	is.NoErr(err)
	_, err = ms.CreateVersion(ctx, prompts.NewVersion{PromptID: pr.ID, Content: strings.Repeat("t", 200<<10)})
	is.NoErr(err)
	path := "/v1/integration/projects/" + p.ID + "/snapshot"
	var slow []*slowReader
	refused := 0
	for range 8 {
		s := openSlow(t, srv, path)
		switch s.status {
		case 200:
			slow = append(slow, s)
		case 503:
			is.Equal(s.res.Header.Get("Retry-After"), "1")
			b, _ := io.ReadAll(s.res.Body)
			is.True(strings.Contains(string(b), `"code":"unavailable"`))
			refused++
		default:
			t.Fatalf("status %d", s.status)
		}
	}
	is.True(len(slow) >= 1)
	is.True(refused >= 1) // the memory is held
	t.Logf("%d snapshots served, %d refused; %d bytes counted", len(slow), refused, h.budget.used.Load())

	get := func(method, path, body string) (int, http.Header) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("X-API-Key", budgetKey)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := srv.Client().Do(req)
		is.NoErr(err)
		defer res.Body.Close()
		_, _ = io.Copy(io.Discard, res.Body)
		return res.StatusCode, res.Header
	}
	reads := []string{
		"/v1/integration/prompts/" + pr.ID + "/versions",
		"/v1/integration/prompts/" + pr.ID + "/versions/1",
		"/v1/integration/events?limit=1000",
	}
	for _, path := range reads {
		status, hd := get("GET", path, "")
		is.Equal(status, 503) // no room for its 200 KiB
		is.Equal(hd.Get("Retry-After"), "1")
		is.Equal(hd.Get("Link"), "")
	}
	status, _ := get("POST", "/v1/integration/prompts/"+pr.ID+"/render", `{"version_number":1,"variables":{}}`)
	is.Equal(status, 503)
	status, _ = get("POST", "/v1/integration/prompts/"+pr.ID+"/versions", `{"content":"`+strings.Repeat("u", 200<<10)+`"}`)
	is.Equal(status, 200) // a change is answered whatever

	for _, s := range slow {
		_, err := io.Copy(io.Discard, s.res.Body)
		is.NoErr(err)
	}
	is.Equal(h.budget.used.Load(), int64(0)) // nothing held
	for _, path := range reads {
		status, _ := get("GET", path, "")
		is.Equal(status, 200) // room again
	}
	// An answer larger than the memory alone is served when nothing else
	// is being written.
	status, _ = get("GET", path, "")
	is.Equal(status, 200)
}
