package ui

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/memstore"
)

// A handler that served no page holds no parse trees; the first page
// parses the templates and keeps them.
func TestTemplatesParsedAtTheFirstPage(t *testing.T) {
	is := is.New(t)
	var handlers []*Handler // kept alive while the heap is read
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	for range 4 {
		h, err := New(memstore.New(), httpapi.NewKeys())
		is.NoErr(err)
		handlers = append(handlers, h)
	}
	unused := heap()
	for _, h := range handlers {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/ui/", nil)) // the sign-in page
		is.Equal(w.Code, http.StatusOK)
	}
	used := heap()
	runtime.KeepAlive(handlers)
	perUnused := (int64(unused) - int64(before)) / 4
	perUsed := (int64(used) - int64(before)) / 4
	t.Logf("a handler holds %d KB before its first page, %d KB after", perUnused>>10, perUsed>>10)
	is.True(perUnused < 100<<10) // no parse trees before the first page
	is.True(perUsed > 150<<10)   // the trees, once a page was served
}
