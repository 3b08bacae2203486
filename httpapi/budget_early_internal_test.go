package httpapi

import (
	"context"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/memstore"
)

// listCounter is a Store that counts the calls of its lists and reads of
// versions.
type listCounter struct {
	*memstore.Store
	calls atomic.Int64
}

func (s *listCounter) ListVersions(ctx context.Context, id string, p prompts.Page) ([]prompts.PromptVersion, bool, error) {
	s.calls.Add(1)
	return s.Store.ListVersions(ctx, id, p)
}

func (s *listCounter) ListPrompts(ctx context.Context, f prompts.PromptFilter) ([]prompts.Prompt, bool, error) {
	s.calls.Add(1)
	return s.Store.ListPrompts(ctx, f)
}

func (s *listCounter) GetVersion(ctx context.Context, id string, n int) (prompts.PromptVersion, error) {
	s.calls.Add(1)
	return s.Store.GetVersion(ctx, id, n)
}

// largeVersions adds a prompt with n versions of size bytes of content
// to the project, and returns its id.
func largeVersions(t *testing.T, ms prompts.Store, projectID string, n, size int) string {
	t.Helper()
	ctx := context.Background()
	p, err := ms.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: projectID, Key: "large", Name: "Large"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := ms.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: strings.Repeat(string(rune('a'+i%26)), size)}); err != nil {
			t.Fatal(err)
		}
	}
	return p.ID
}

// When the answers being written hold all the memory for answers, a read
// is refused at once: 503 with Retry-After, the store not read, (almost)
// nothing allocated for it.
func TestReadsAreRefusedBeforeTheStoreIsRead(t *testing.T) {
	is := is.New(t)
	ms := memstore.New()
	ctx := context.Background()
	p, err := ms.CreateProject(ctx, prompts.NewProject{Name: "Budget"})
	is.NoErr(err)
	id := largeVersions(t, ms, p.ID, 6, 512<<10)
	st := &listCounter{Store: ms}
	keys := NewKeys()
	is.NoErr(keys.Add(Key{Name: "k", Role: RoleAdmin, Secret: budgetKey}))
	const limit = 1 << 20
	h := New(st, WithAuthenticator(keys), WithMaxAnswerMemory(limit))
	h.budget.used.Store(limit) // the answers being written hold it all
	paths := []string{
		"/v1/integration/prompts/" + id + "/versions?limit=1000",
		"/v1/integration/prompts/" + id + "/versions/1",
		"/v1/integration/prompts?project_id=" + p.ID,
		"/v1/integration/events?limit=1000",
		"/v1/integration/projects/" + p.ID + "/snapshot",
	}
	for _, path := range paths {
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("X-API-Key", budgetKey)
		var w *httptest.ResponseRecorder
		serve := func() {
			w = httptest.NewRecorder()
			h.ServeHTTP(w, req)
		}
		serve() // warm up
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		for range 10 {
			serve()
		}
		runtime.ReadMemStats(&m1)
		perRead := (m1.TotalAlloc - m0.TotalAlloc) / 10
		t.Logf("GET %s refused: %d bytes allocated a read", path, perRead)
		is.Equal(w.Code, 503)
		is.Equal(w.Header().Get("Retry-After"), "1")
		is.True(perRead < 32<<10) // not the page: 3 MiB
	}
	is.Equal(st.calls.Load(), int64(0)) // the store was not read
	is.Equal(h.budget.used.Load(), int64(limit))
}

// Slow readers of a page of large versions, or of the events that
// created them, hold at most the memory for answers, and a little more:
// the pages being built and written are counted whole, not only the
// bytes of each answer.
func TestSlowReadersOfLargeVersionsHoldTheBudget(t *testing.T) {
	for _, list := range []string{"versions", "events"} {
		t.Run(list, func(t *testing.T) {
			is := is.New(t)
			const limit = 16 << 20
			h, srv, ms, p := budgetServer(t, WithMaxAnswerMemory(limit))
			id := largeVersions(t, ms, p.ID, 12, 1<<20)
			path := "/v1/integration/prompts/" + id + "/versions?limit=1000"
			if list == "events" {
				path = "/v1/integration/events?limit=1000"
			}
			before := heap()
			served, refused := 0, 0
			for range 24 {
				s := openSlow(t, srv, path)
				switch s.status {
				case 200:
					served++
				case 503:
					refused++
				default:
					t.Fatalf("status %d", s.status)
				}
			}
			held := int64(heap()) - int64(before)
			t.Logf("24 slow readers of a page of 12 versions of 1 MiB (%s), with %d bytes for answers: %d served, %d refused; the heap grew by %d bytes, %d counted", list, limit, served, refused, held, h.budget.used.Load())
			is.True(served >= 1)
			is.True(held < limit+4<<20) // the memory for answers, and a little (before: 2.6 times it)
		})
	}
}
