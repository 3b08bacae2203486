package sqlstore_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lib/pq"
	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/sqlstore"
)

// idemRequest is the write the processes of TestIdempotencyAcrossProcesses
// repeat.
func idemRequest(promptID string) prompts.NewVersion {
	return prompts.NewVersion{PromptID: promptID, Content: "once", Environments: []prompts.Environment{prompts.Production},
		Idempotency: prompts.Idempotency{Key: "retry-1", Scope: "ci", Request: "the same request"}}
}

// TestIdempotencyAcrossProcesses: several processes repeat one write with
// one idempotency key at once, as retries reaching replicas on one
// database would. One does the work; every other answers its result.
func TestIdempotencyAcrossProcesses(t *testing.T) {
	is := is.New(t)
	s := newSQLStore(t)
	_, p := fixture(t, s)
	const processes, writers = 3, 4
	var answers []string
	for _, out := range runChildren(t, "idempotency", s.Schema(), p.ID, processes, writers, nil) {
		answers = append(answers, strings.Fields(out)...)
	}
	is.Equal(len(answers), processes*writers)
	done := 0
	for _, a := range answers {
		id, how, _ := strings.Cut(a, ":")
		is.Equal(id, strings.SplitN(answers[0], ":", 2)[0]) // one version for all
		if how == "done" {
			done++
		}
	}
	is.Equal(done, 1) // done once, replayed by every other
	vs, _, err := s.ListVersions(context.Background(), p.ID, prompts.Page{})
	is.NoErr(err)
	is.Equal(len(vs), 1)
	ds, _, err := s.ListDeployments(context.Background(), prompts.DeploymentFilter{PromptID: p.ID})
	is.NoErr(err)
	is.Equal(len(ds), 1) // one activation record

	// A repeat from this process, later, replays too.
	v, err := s.CreateVersion(context.Background(), idemRequest(p.ID))
	is.NoErr(err)
	is.True(v.Replayed)
	is.Equal(v.ID, vs[0].ID)
}

// runIdempotencyChild is a process of TestIdempotencyAcrossProcesses: it
// prints "<version id>:done" or "<version id>:replayed" per writer.
func runIdempotencyChild() int {
	env := func(k string) string { return os.Getenv("SQLSTORE_TEST_" + k) }
	s, writers, closeAll, err := openChild()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer closeAll()
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		failed bool
	)
	for range writers {
		wg.Go(func() {
			v, err := s.CreateVersion(context.Background(), idemRequest(env("PROMPT")))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				failed = true
				return
			}
			how := "done"
			if v.Replayed {
				how = "replayed"
			}
			fmt.Printf("%s:%s\n", v.ID, how)
		})
	}
	wg.Wait()
	if failed {
		return 1
	}
	return 0
}

// Records past the retention are removed by later idempotent writes,
// without a goroutine: the table does not grow with keys no one repeats.
func TestExpiredIdempotencyRecordsAreRemoved(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s := newSQLStore(t, sqlstore.WithClock(clock))
	proj, _ := fixture(t, s)
	in := func(key string) prompts.NewPrompt {
		return prompts.NewPrompt{ProjectID: proj.ID, Key: "k-" + key, Name: "K", Idempotency: prompts.Idempotency{Key: key, Request: "r"}}
	}
	for _, key := range []string{"a", "b", "c"} {
		_, err := s.CreatePrompt(ctx, in(key))
		is.NoErr(err)
	}
	records := func() (n int) {
		is.NoErr(database(t).GetContext(ctx, &n, `SELECT count(*) FROM `+pq.QuoteIdentifier(s.Schema())+`.idempotency`))
		return n
	}
	is.Equal(records(), 3)
	mu.Lock()
	now = now.Add(prompts.IdempotencyRetention + time.Second)
	mu.Unlock()
	_, err := s.CreatePrompt(ctx, in("d"))
	is.NoErr(err)
	is.Equal(records(), 1) // only d's
}
