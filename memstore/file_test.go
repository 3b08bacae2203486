package memstore_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/memstore"
	"github.com/promptkit/prompts/storetest"
)

// childVar tells this test binary, run again as a child process of a
// test (inChild), what to do and on which file: "NAME PATH", NAME one of
// children.
const childVar = "MEMSTORE_TEST_CHILD"

// children are what a child process may do, by name.
var children = map[string]func(path string) int{"open": openChild}

func TestMain(m *testing.M) {
	if v := os.Getenv(childVar); v != "" {
		name, path, _ := strings.Cut(v, " ")
		os.Exit(children[name](path))
	}
	os.Exit(m.Run())
}

// openChild opens the file at path and writes to it, and prints "wrote",
// or the error.
func openChild(path string) int {
	s, err := memstore.Open(path)
	if err != nil {
		fmt.Println(err)
		return 0
	}
	defer s.Close()
	if _, err := s.CreateProject(context.Background(), prompts.NewProject{Name: "Child"}); err != nil {
		fmt.Println(err)
		return 0
	}
	fmt.Println("wrote")
	return 0
}

// inChild runs children[name] on path in another process, and returns
// what it printed.
func inChild(t *testing.T, name, path string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childVar+"="+name+" "+path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child process: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// The conformance suite holds over a Store opened on a file, and the
// file grows by at most storetest.MaxRecordSize per idempotency record.
func TestFileStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T, clock prompts.Clock) prompts.Store {
		path := filepath.Join(t.TempDir(), "prompts.data")
		s, err := memstore.Open(path, memstore.WithClock(clock))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return sizedFile{s, path}
	})
}

// sizedFile is a Store opened on a file that reports the file's size
// (storetest.StoredSizer).
type sizedFile struct {
	*memstore.Store
	path string
}

func (f sizedFile) StoredSize(context.Context) (int64, error) {
	st, err := os.Stat(f.path)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// The conformance suite holds over a Store opened on a file that is
// closed and opened again after every write: what a write did is all in
// the file, its events, deliveries and attempts included (leases are kept in memory
// only).
func TestFileStoreReopened(t *testing.T) {
	storetest.Run(t, func(t *testing.T, clock prompts.Clock) prompts.Store {
		r := &reopening{t: t, path: filepath.Join(t.TempDir(), "prompts.data"), clock: clock}
		r.reopen()
		t.Cleanup(func() { r.s.Close() })
		return r
	})
}

// reopening is a Store opened on a file that it closes and opens again
// after every write.
type reopening struct {
	t     *testing.T
	path  string
	clock prompts.Clock
	mu    sync.RWMutex
	s     *memstore.Store
}

func (r *reopening) reopen() {
	if r.s != nil {
		if err := r.s.Close(); err != nil {
			r.t.Errorf("close: %v", err)
		}
	}
	s, err := memstore.Open(r.path, memstore.WithClock(r.clock))
	if err != nil {
		r.t.Fatalf("reopen: %v", err)
	}
	r.s = s
}

func wrote[T any](r *reopening, f func(s *memstore.Store) (T, error)) (T, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, err := f(r.s)
	r.reopen()
	return v, err
}

func read[T any](r *reopening, f func(s *memstore.Store) T) T {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return f(r.s)
}

type page[T any] struct {
	items []T
	more  bool
	err   error
}

func (r *reopening) CreateProject(ctx context.Context, in prompts.NewProject) (prompts.Project, error) {
	return wrote(r, func(s *memstore.Store) (prompts.Project, error) { return s.CreateProject(ctx, in) })
}
func (r *reopening) CreatePrompt(ctx context.Context, in prompts.NewPrompt) (prompts.Prompt, error) {
	return wrote(r, func(s *memstore.Store) (prompts.Prompt, error) { return s.CreatePrompt(ctx, in) })
}
func (r *reopening) UpdatePrompt(ctx context.Context, id string, in prompts.PromptUpdate) (prompts.Prompt, error) {
	return wrote(r, func(s *memstore.Store) (prompts.Prompt, error) { return s.UpdatePrompt(ctx, id, in) })
}
func (r *reopening) CreateVersion(ctx context.Context, in prompts.NewVersion) (prompts.PromptVersion, error) {
	return wrote(r, func(s *memstore.Store) (prompts.PromptVersion, error) { return s.CreateVersion(ctx, in) })
}
func (r *reopening) Activate(ctx context.Context, in prompts.Activation) (prompts.ActivePrompt, error) {
	return wrote(r, func(s *memstore.Store) (prompts.ActivePrompt, error) { return s.Activate(ctx, in) })
}
func (r *reopening) Deactivate(ctx context.Context, in prompts.Deactivation) (prompts.ActivePrompt, error) {
	return wrote(r, func(s *memstore.Store) (prompts.ActivePrompt, error) { return s.Deactivate(ctx, in) })
}
func (r *reopening) Rollback(ctx context.Context, in prompts.Rollback) (prompts.ActivePrompt, error) {
	return wrote(r, func(s *memstore.Store) (prompts.ActivePrompt, error) { return s.Rollback(ctx, in) })
}
func (r *reopening) PutEnvironment(ctx context.Context, in prompts.NewEnvironment) (prompts.ProjectEnvironment, error) {
	return wrote(r, func(s *memstore.Store) (prompts.ProjectEnvironment, error) { return s.PutEnvironment(ctx, in) })
}
func (r *reopening) DeleteEnvironment(ctx context.Context, projectID string, name prompts.Environment) error {
	_, err := wrote(r, func(s *memstore.Store) (struct{}, error) {
		return struct{}{}, s.DeleteEnvironment(ctx, projectID, name)
	})
	return err
}
func (r *reopening) ListEnvironments(ctx context.Context, projectID string) ([]prompts.ProjectEnvironment, error) {
	x := read(r, func(s *memstore.Store) result[[]prompts.ProjectEnvironment] {
		v, err := s.ListEnvironments(ctx, projectID)
		return result[[]prompts.ProjectEnvironment]{v, err}
	})
	return x.v, x.err
}

type result[T any] struct {
	v   T
	err error
}

func (r *reopening) GetProject(ctx context.Context, id string) (prompts.Project, error) {
	x := read(r, func(s *memstore.Store) result[prompts.Project] {
		v, err := s.GetProject(ctx, id)
		return result[prompts.Project]{v, err}
	})
	return x.v, x.err
}
func (r *reopening) GetPrompt(ctx context.Context, id string) (prompts.Prompt, error) {
	x := read(r, func(s *memstore.Store) result[prompts.Prompt] {
		v, err := s.GetPrompt(ctx, id)
		return result[prompts.Prompt]{v, err}
	})
	return x.v, x.err
}
func (r *reopening) GetVersion(ctx context.Context, id string, n int) (prompts.PromptVersion, error) {
	x := read(r, func(s *memstore.Store) result[prompts.PromptVersion] {
		v, err := s.GetVersion(ctx, id, n)
		return result[prompts.PromptVersion]{v, err}
	})
	return x.v, x.err
}
func (r *reopening) GetActive(ctx context.Context, id string, env prompts.Environment) (prompts.ActivePrompt, error) {
	x := read(r, func(s *memstore.Store) result[prompts.ActivePrompt] {
		v, err := s.GetActive(ctx, id, env)
		return result[prompts.ActivePrompt]{v, err}
	})
	return x.v, x.err
}
func (r *reopening) GetActiveByKey(ctx context.Context, projectID, key string, env prompts.Environment) (prompts.ActivePrompt, error) {
	x := read(r, func(s *memstore.Store) result[prompts.ActivePrompt] {
		v, err := s.GetActiveByKey(ctx, projectID, key, env)
		return result[prompts.ActivePrompt]{v, err}
	})
	return x.v, x.err
}
func (r *reopening) ReadActive(ctx context.Context, q prompts.ActiveQuery) (prompts.ActivePrompt, bool, error) {
	type answer struct {
		a     prompts.ActivePrompt
		stale bool
	}
	x := read(r, func(s *memstore.Store) result[answer] {
		a, stale, err := s.ReadActive(ctx, q)
		return result[answer]{answer{a, stale}, err}
	})
	return x.v.a, x.v.stale, x.err
}
func (r *reopening) ListProjects(ctx context.Context, f prompts.ProjectFilter) ([]prompts.Project, bool, error) {
	x := read(r, func(s *memstore.Store) page[prompts.Project] {
		v, m, err := s.ListProjects(ctx, f)
		return page[prompts.Project]{v, m, err}
	})
	return x.items, x.more, x.err
}
func (r *reopening) ListPrompts(ctx context.Context, f prompts.PromptFilter) ([]prompts.Prompt, bool, error) {
	x := read(r, func(s *memstore.Store) page[prompts.Prompt] {
		v, m, err := s.ListPrompts(ctx, f)
		return page[prompts.Prompt]{v, m, err}
	})
	return x.items, x.more, x.err
}
func (r *reopening) ListVersions(ctx context.Context, id string, p prompts.Page) ([]prompts.PromptVersion, bool, error) {
	x := read(r, func(s *memstore.Store) page[prompts.PromptVersion] {
		v, m, err := s.ListVersions(ctx, id, p)
		return page[prompts.PromptVersion]{v, m, err}
	})
	return x.items, x.more, x.err
}
func (r *reopening) ListDeployments(ctx context.Context, f prompts.DeploymentFilter) ([]prompts.Deployment, bool, error) {
	x := read(r, func(s *memstore.Store) page[prompts.Deployment] {
		v, m, err := s.ListDeployments(ctx, f)
		return page[prompts.Deployment]{v, m, err}
	})
	return x.items, x.more, x.err
}

func (r *reopening) ListEvents(ctx context.Context, f prompts.EventFilter) ([]prompts.Event, bool, error) {
	x := read(r, func(s *memstore.Store) page[prompts.Event] {
		v, m, err := s.ListEvents(ctx, f)
		return page[prompts.Event]{v, m, err}
	})
	return x.items, x.more, x.err
}
func (r *reopening) LastEventID(ctx context.Context) (int64, error) {
	x := read(r, func(s *memstore.Store) result[int64] {
		v, err := s.LastEventID(ctx)
		return result[int64]{v, err}
	})
	return x.v, x.err
}

// WaitEvents waits on the Store open now, without holding r.mu (a write
// must get through); when a write's reopen closes that Store under it,
// it waits on the next.
func (r *reopening) WaitEvents(ctx context.Context, after int64) error {
	for {
		s := read(r, func(s *memstore.Store) *memstore.Store { return s })
		err := s.WaitEvents(ctx, after)
		if err == nil || ctx.Err() != nil || read(r, func(now *memstore.Store) bool { return now == s }) {
			return err
		}
	}
}

func (r *reopening) CreateWebhook(ctx context.Context, in prompts.NewWebhook) (prompts.Webhook, error) {
	return wrote(r, func(s *memstore.Store) (prompts.Webhook, error) { return s.CreateWebhook(ctx, in) })
}
func (r *reopening) DeleteWebhook(ctx context.Context, id string) error {
	_, err := wrote(r, func(s *memstore.Store) (struct{}, error) { return struct{}{}, s.DeleteWebhook(ctx, id) })
	return err
}

// ClaimDeliveries writes nothing to the file (a lease is kept in memory
// only): no reopen.
func (r *reopening) ClaimDeliveries(ctx context.Context, now time.Time, max int, lease time.Duration) ([]prompts.Delivery, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.s.ClaimDeliveries(ctx, now, max, lease)
}
func (r *reopening) FinishDelivery(ctx context.Context, id string, a prompts.DeliveryAttempt, retryAt time.Time) error {
	_, err := wrote(r, func(s *memstore.Store) (struct{}, error) { return struct{}{}, s.FinishDelivery(ctx, id, a, retryAt) })
	return err
}
func (r *reopening) GetWebhook(ctx context.Context, id string) (prompts.Webhook, error) {
	x := read(r, func(s *memstore.Store) result[prompts.Webhook] {
		v, err := s.GetWebhook(ctx, id)
		return result[prompts.Webhook]{v, err}
	})
	return x.v, x.err
}
func (r *reopening) ListWebhooks(ctx context.Context, p prompts.Page) ([]prompts.Webhook, bool, error) {
	x := read(r, func(s *memstore.Store) page[prompts.Webhook] {
		v, m, err := s.ListWebhooks(ctx, p)
		return page[prompts.Webhook]{v, m, err}
	})
	return x.items, x.more, x.err
}
func (r *reopening) ListDeliveryAttempts(ctx context.Context, id string, p prompts.Page) ([]prompts.DeliveryAttempt, bool, error) {
	x := read(r, func(s *memstore.Store) page[prompts.DeliveryAttempt] {
		v, m, err := s.ListDeliveryAttempts(ctx, id, p)
		return page[prompts.DeliveryAttempt]{v, m, err}
	})
	return x.items, x.more, x.err
}

// A torn last record, the trace of a write cut by a crash, is dropped
// with a log line; everything before it is there.
func TestFileStoreTornTail(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "prompts.data")
	s, err := memstore.Open(path)
	is.NoErr(err)
	proj, err := s.CreateProject(ctx, prompts.NewProject{Name: "P"})
	is.NoErr(err)
	p, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "K"})
	is.NoErr(err)
	_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "one"})
	is.NoErr(err)
	before, err := os.Stat(path)
	is.NoErr(err)
	_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "two"})
	is.NoErr(err)
	is.NoErr(s.Close())
	whole, err := os.ReadFile(path)
	is.NoErr(err)
	size := int64(len(whole))

	for cut := before.Size() + 1; cut < size; cut += (size - before.Size()) / 7 {
		is.NoErr(os.WriteFile(path, whole[:cut], 0o600)) // the last record, torn
		var logs bytes.Buffer
		s, err = memstore.Open(path, memstore.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
		is.NoErr(err) // opens
		is.True(strings.Contains(logs.String(), "dropped a torn record"))
		vs, _, err := s.ListVersions(ctx, p.ID, prompts.Page{})
		is.NoErr(err)
		is.Equal(len(vs), 1) // the whole records are there
		v, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "two again"})
		is.NoErr(err) // and it writes on
		is.Equal(v.VersionNumber, 2)
		is.NoErr(s.Close())
		s, err = memstore.Open(path)
		is.NoErr(err)
		vs, _, err = s.ListVersions(ctx, p.ID, prompts.Page{})
		is.NoErr(err)
		is.Equal(len(vs), 2)
		is.NoErr(s.Close())
	}

	is.NoErr(os.WriteFile(path, []byte("something else entirely\n"), 0o600))
	_, err = memstore.Open(path)
	is.True(err != nil) // not a journal: refused, not emptied
	b, _ := os.ReadFile(path)
	is.Equal(string(b), "something else entirely\n")
}

// A second Open of the same file fails while the first is open.
func TestFileStoreLock(t *testing.T) {
	is := is.New(t)
	path := filepath.Join(t.TempDir(), "prompts.data")
	s, err := memstore.Open(path)
	is.NoErr(err)
	_, err = memstore.Open(path)
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "in use"))
	is.NoErr(s.Err()) // writing
	is.NoErr(s.Close())
	is.True(s.Err() != nil) // closed: writes fail, and Err says so
	_, err = s.CreateProject(context.Background(), prompts.NewProject{Name: "P"})
	is.Equal(prompts.ErrorCode(err), prompts.CodeUnavailable)
	s, err = memstore.Open(path)
	is.NoErr(err) // free again
	is.NoErr(s.Close())
}

// The journal stays proportional to the data: a prompt renamed many
// times takes the space of one prompt, once compacted, and of the events
// of the renames kept (here, those of the last minute: a second each).
func TestFileStoreCompacts(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "prompts.data")
	var ticks time.Duration
	clock := func() time.Time {
		ticks += time.Second
		return time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC).Add(ticks)
	}
	opts := []memstore.Option{memstore.WithClock(clock), memstore.WithEventRetention(time.Minute)}
	s, err := memstore.Open(path, opts...)
	is.NoErr(err)
	proj, err := s.CreateProject(ctx, prompts.NewProject{Name: "P"})
	is.NoErr(err)
	p, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "K"})
	is.NoErr(err)
	var maxSize int64
	for i := range 12000 {
		_, err := s.UpdatePrompt(ctx, p.ID, prompts.PromptUpdate{Name: prompts.Some(fmt.Sprintf("name %d", i))})
		is.NoErr(err)
		if i%500 == 0 {
			st, err := os.Stat(path)
			is.NoErr(err)
			maxSize = max(maxSize, st.Size())
		}
	}
	is.True(maxSize < 2<<20) // never far past the 1 MiB of slack
	is.NoErr(s.Close())
	before, err := os.Stat(path)
	is.NoErr(err)
	s, err = memstore.Open(path, opts...)
	is.NoErr(err)
	defer s.Close()
	st, err := os.Stat(path)
	is.NoErr(err)
	// Within its slack since the last compaction: not rewritten at Open
	// (which would cost a large file seconds).
	is.True(os.SameFile(st, before))
	is.Equal(st.Size(), before.Size())
	got, err := s.GetPrompt(ctx, p.ID)
	is.NoErr(err)
	is.Equal(got.Name, "name 11999")
}

// An idempotent write that sets off a compaction keeps its record in the
// compacted file: after a reopen, every repeat is a replay.
func TestFileStoreCompactionKeepsIdempotencyRecords(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "prompts.data")
	s, err := memstore.Open(path)
	is.NoErr(err)
	proj, err := s.CreateProject(ctx, prompts.NewProject{Name: "P"})
	is.NoErr(err)
	p, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "K"})
	is.NoErr(err)
	big := strings.Repeat("x", 100<<10)
	in := func(i int) prompts.NewVersion {
		return prompts.NewVersion{PromptID: p.ID, Content: big, Idempotency: prompts.Idempotency{Key: fmt.Sprint("key-", i), Request: "r"}}
	}
	const n = 15 // 1.5 MiB: one of them sets off a compaction
	for i := range n {
		_, err := s.CreateVersion(ctx, in(i))
		is.NoErr(err)
	}
	is.NoErr(s.Close())
	s, err = memstore.Open(path)
	is.NoErr(err)
	defer s.Close()
	for i := range n {
		v, err := s.CreateVersion(ctx, in(i))
		is.NoErr(err)
		is.True(v.Replayed)            // every key is still known
		is.Equal(v.VersionNumber, i+1) // with its version
	}
}

// A file damaged in the middle (whole records after one that cannot be
// read) is not the torn end a crash leaves: it is refused, untouched.
func TestFileStoreRefusesADamagedFile(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "prompts.data")
	s, err := memstore.Open(path)
	is.NoErr(err)
	proj, err := s.CreateProject(ctx, prompts.NewProject{Name: "Project with a long enough name"})
	is.NoErr(err)
	for i := range 3 {
		_, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: fmt.Sprint("k", i), Name: "K"})
		is.NoErr(err)
	}
	is.NoErr(s.Close())
	data, err := os.ReadFile(path)
	is.NoErr(err)
	at := bytes.Index(data, []byte("Project with a long enough name"))
	is.True(at > 0)
	data[at] ^= 0xff // a bit flipped in the first record
	is.NoErr(os.WriteFile(path, data, 0o600))
	_, err = memstore.Open(path)
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "damaged"))
	after, err := os.ReadFile(path)
	is.NoErr(err)
	is.Equal(after, data) // left as it is
}

// grow writes versions of big content to the prompt until the journal is
// past its slack, so that a compaction is due.
func grow(t *testing.T, s *memstore.Store, promptID string, n int, tick func()) {
	t.Helper()
	big := strings.Repeat("x", 100<<10)
	for range n {
		tick()
		if _, err := s.CreateVersion(context.Background(), prompts.NewVersion{PromptID: promptID, Content: big}); err != nil {
			t.Fatalf("a write while compactions fail: %v", err)
		}
	}
}

// A failed compaction (here: something at the name of its new file that
// cannot be removed) is housekeeping left undone: the write that set it
// off, durable already, succeeds, and so do the later ones; the failure
// is logged once, and the compaction is retried later, when it succeeds.
// A compaction that fails at Open does not fail Open.
func TestFileStoreCompactionFailureIsRetried(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	tick := func() { now = now.Add(2 * time.Second) }
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	path := filepath.Join(t.TempDir(), "prompts.data")
	s, err := memstore.Open(path, memstore.WithClock(clock), memstore.WithLogger(logger))
	is.NoErr(err)
	proj, err := s.CreateProject(ctx, prompts.NewProject{Name: "P"})
	is.NoErr(err)
	p, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "K"})
	is.NoErr(err)
	blocker := filepath.Join(path+".compact", "in the way")
	is.NoErr(os.MkdirAll(blocker, 0o700)) // every compaction fails from now on
	before, err := os.Stat(path)
	is.NoErr(err)
	logs.Reset()

	grow(t, s, p.ID, 30, tick)                                     // 3 MiB: a compaction is due, and tried, many times
	is.NoErr(s.Err())                                              // the writes go on
	is.Equal(strings.Count(logs.String(), "compaction failed"), 1) // logged once
	is.True(strings.Contains(logs.String(), path+".compact"))      // naming what failed
	st, err := os.Stat(path)
	is.NoErr(err)
	is.True(os.SameFile(st, before)) // not compacted

	is.NoErr(os.RemoveAll(path + ".compact"))
	now = now.Add(2 * time.Minute) // past the retry's delay
	grow(t, s, p.ID, 1, tick)
	st, err = os.Stat(path)
	is.NoErr(err)
	is.True(!os.SameFile(st, before)) // compacted: a new file took the old one's place
	is.True(strings.Contains(logs.String(), "compaction succeeded after failed attempts"))
	is.NoErr(s.Close())

	is.NoErr(os.MkdirAll(blocker, 0o700))
	s, err = memstore.Open(path, memstore.WithClock(clock))
	is.NoErr(err) // a compaction that fails at Open does not fail it
	defer s.Close()
	vs, _, err := s.ListVersions(ctx, p.ID, prompts.Page{Limit: 100})
	is.NoErr(err)
	is.Equal(len(vs), 31) // every write that succeeded is there
	grow(t, s, p.ID, 1, tick)
}

// The API keys: each write reopens the file, so that a key, its last use
// and its revocation are all in it.
func (r *reopening) CreateKey(ctx context.Context, in prompts.NewAPIKey) (prompts.APIKey, string, error) {
	type created struct {
		k      prompts.APIKey
		secret string
	}
	c, err := wrote(r, func(s *memstore.Store) (created, error) {
		k, secret, err := s.CreateKey(ctx, in)
		return created{k, secret}, err
	})
	return c.k, c.secret, err
}
func (r *reopening) RevokeKey(ctx context.Context, in prompts.KeyRevocation) (prompts.APIKey, error) {
	return wrote(r, func(s *memstore.Store) (prompts.APIKey, error) { return s.RevokeKey(ctx, in) })
}
func (r *reopening) TouchKey(ctx context.Context, id string, at time.Time) (bool, error) {
	return wrote(r, func(s *memstore.Store) (bool, error) { return s.TouchKey(ctx, id, at) })
}
func (r *reopening) ListKeys(ctx context.Context, f prompts.KeyFilter) ([]prompts.APIKey, bool, error) {
	x := read(r, func(s *memstore.Store) page[prompts.APIKey] {
		v, m, err := s.ListKeys(ctx, f)
		return page[prompts.APIKey]{v, m, err}
	})
	return x.items, x.more, x.err
}
func (r *reopening) LookupKey(ctx context.Context, hash [32]byte) (prompts.APIKey, error) {
	x := read(r, func(s *memstore.Store) page[prompts.APIKey] {
		k, err := s.LookupKey(ctx, hash)
		return page[prompts.APIKey]{[]prompts.APIKey{k}, false, err}
	})
	return x.items[0], x.err
}
