package httpapi_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/memstore"
)

// BenchmarkStreams1000 measures what open event streams cost: 1,000
// streams over real connections to a handler on memstore (half with a
// key of every project, half with a key of the project written to), the
// heap and goroutine stacks each adds to the process (server and the
// minimal client together), and, per operation, the time from the start
// of one write until every stream has received its event (p50 and max
// over the streams, averaged over the operations). It fails when a stream
// costs more than 64 KiB or an event takes more than 200 ms to reach all.
//
//	go test -run '^$' -bench Streams1000 -benchtime 20x ./httpapi
func BenchmarkStreams1000(b *testing.B) {
	const streams = 1000
	ctx := context.Background()
	store := memstore.New()
	project, err := store.CreateProject(ctx, prompts.NewProject{Name: "Bench"})
	if err != nil {
		b.Fatal(err)
	}
	keys := httpapi.NewKeys()
	const all, one = "stream-bench-all-0123456789", "stream-bench-one-0123456789"
	for _, err := range []error{
		keys.Add(httpapi.Key{Name: "all", Role: httpapi.RoleRead, Secret: all}),
		keys.Add(httpapi.Key{Name: "one", Role: httpapi.RoleRead, Secret: one, ProjectIDs: []string{project.ID}}),
	} {
		if err != nil {
			b.Fatal(err)
		}
	}
	h := httpapi.New(store, httpapi.WithAuthenticator(keys))
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer h.CloseStreams()

	var t0 atomic.Int64 // the start of the write, in Unix nanoseconds
	lat := make(chan time.Duration, streams)

	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	conns := make([]net.Conn, 0, streams)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range streams {
		key := all
		if i%2 == 1 {
			key = one
		}
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		conns = append(conns, c)
		fmt.Fprintf(c, "GET /v1/integration/events HTTP/1.1\r\nHost: bench\r\nX-API-Key: %s\r\nAccept: text/event-stream\r\n\r\n", key)
		br := bufio.NewReaderSize(c, 512)
		status, err := br.ReadString('\n')
		if err != nil || !strings.Contains(status, " 200 ") {
			b.Fatalf("stream %d: %q %v", i, status, err)
		}
		for { // the headers
			line, err := br.ReadString('\n')
			if err != nil {
				b.Fatal(err)
			}
			if line == "\r\n" {
				break
			}
		}
		go func() {
			for {
				line, err := br.ReadSlice('\n')
				if err != nil && err != bufio.ErrBufferFull {
					return
				}
				if len(line) > 4 && string(line[:4]) == "id: " {
					lat <- time.Duration(time.Now().UnixNano() - t0.Load())
				}
			}
		}()
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := float64(after.HeapAlloc-before.HeapAlloc) / streams
	stack := float64(after.StackInuse-before.StackInuse) / streams

	var p50s, maxes []time.Duration
	b.ResetTimer()
	for i := range b.N {
		t0.Store(time.Now().UnixNano())
		if _, err := store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: project.ID, Key: fmt.Sprint("k", i), Name: "N"}); err != nil {
			b.Fatal(err)
		}
		got := make([]time.Duration, 0, streams)
		timeout := time.After(10 * time.Second)
		for len(got) < streams {
			select {
			case d := <-lat:
				got = append(got, d)
			case <-timeout:
				b.Fatalf("%d of %d streams received the event within 10 s", len(got), streams)
			}
		}
		slices.Sort(got)
		p50s = append(p50s, got[len(got)/2])
		maxes = append(maxes, got[len(got)-1])
	}
	b.StopTimer()
	mean := func(ds []time.Duration) time.Duration {
		var sum time.Duration
		for _, d := range ds {
			sum += d
		}
		return sum / time.Duration(len(ds))
	}
	b.ReportMetric(heap, "heap-B/stream")
	b.ReportMetric(stack, "stack-B/stream")
	b.ReportMetric(float64(mean(p50s).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(mean(maxes).Microseconds())/1000, "max-ms")
	b.ReportMetric(float64(slices.Max(maxes).Microseconds())/1000, "worst-max-ms")
	if heap+stack > 64<<10 {
		b.Errorf("a stream costs %.0f B of heap and %.0f B of stack, over 64 KiB", heap, stack)
	}
	if worst := slices.Max(maxes); worst > 200*time.Millisecond {
		b.Errorf("an event took %v to reach every stream, over 200 ms", worst)
	}
}
