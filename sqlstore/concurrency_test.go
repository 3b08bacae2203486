package sqlstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/internal/poll"
	"github.com/promptkit/prompts/sqlstore"
)

// TestCreateVersionIDBehindLatest: a writer whose clock is behind the one
// that wrote the latest version still gets the next number and an id after
// the latest one.
func TestCreateVersionIDBehindLatest(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	ahead := newSQLStore(t, sqlstore.WithClock(skewedClock(time.Hour)))
	retries := &countingHandler{}
	behind, err := sqlstore.New(database(t), sqlstore.WithSchema(ahead.Schema()), sqlstore.WithLogger(slog.New(retries)))
	is.NoErr(err) // a second store on the same schema, with the real clock
	defer behind.Close()
	_, p := fixture(t, ahead)

	v1, err := ahead.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "one"})
	is.NoErr(err) // version 1, an hour ahead
	v2, err := behind.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "two", Environments: []prompts.Environment{prompts.Production}})
	is.NoErr(err)                            // version 2, from behind
	is.Equal(v2.VersionNumber, 2)            // the next number
	is.True(v2.ID > v1.ID)                   // an id after the latest
	is.Equal(retries.count.Load(), int64(1)) // stored under the lock, once
	got, err := behind.GetActive(ctx, p.ID, prompts.Production)
	is.NoErr(err)                        // read
	is.Equal(got.LatestVersionID, v2.ID) // latest is version 2
	is.True(got.ActiveVersion != nil)    // activated in the same step
	is.Equal(*got.ActiveVersion, v2)     // as returned
	v3, err := ahead.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "three"})
	is.NoErr(err)                 // and the clock ahead goes on
	is.Equal(v3.VersionNumber, 3) // with number 3
	is.True(v3.ID > v2.ID)        // and a larger id
}

// TestCreateVersionConcurrentStores: writers in several Stores with clocks
// apart, each Store with its own pool, as replicas would be.
func TestCreateVersionConcurrentStores(t *testing.T) {
	is := is.New(t)
	first := newSQLStore(t)
	_, p := fixture(t, first)
	skews := []time.Duration{-2 * time.Second, 0, 3 * time.Millisecond, 2 * time.Second}
	const writers, each = 4, 15
	var (
		wg      sync.WaitGroup
		retries countingHandler
		failed  atomic.Int64
	)
	for _, skew := range skews {
		db := openDB(t, writers, "")
		s, err := sqlstore.New(db, sqlstore.WithSchema(first.Schema()), sqlstore.WithClock(skewedClock(skew)), sqlstore.WithLogger(slog.New(&retries)))
		is.NoErr(err) // new store
		t.Cleanup(func() { _ = s.Close() })
		for range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					env := []prompts.Environment{prompts.Production}[:i%2]
					if _, err := s.CreateVersion(context.Background(), prompts.NewVersion{PromptID: p.ID, Content: "c", Environments: env}); err != nil {
						t.Error(err)
						failed.Add(1)
					}
				}
			}()
		}
	}
	wg.Wait()
	is.Equal(failed.Load(), int64(0)) // every write succeeded
	t.Logf("%d of %d writes retried under the lock", retries.count.Load(), len(skews)*writers*each)
	checkVersions(t, first, p.ID, len(skews)*writers*each)
}

// checkVersions checks that the prompt has versions 1..n, no gap, no
// duplicate, ids increasing with numbers, and the latest id on the prompt.
func checkVersions(t *testing.T, s prompts.Store, promptID string, n int) {
	t.Helper()
	is := is.New(t)
	ctx := context.Background()
	var all []prompts.PromptVersion
	after := ""
	for {
		page, more, err := s.ListVersions(ctx, promptID, prompts.Page{Limit: prompts.MaxLimit, After: after})
		is.NoErr(err) // list versions
		all = append(all, page...)
		if !more {
			break
		}
		after = page[len(page)-1].ID
	}
	is.Equal(len(all), n) // every version stored
	for i, v := range all {
		if v.VersionNumber != n-i {
			t.Fatalf("version %d of the list (newest first) has number %d, want %d", i, v.VersionNumber, n-i)
		}
		if i > 0 && v.ID >= all[i-1].ID {
			t.Fatalf("version %d has id %s, not below version %d's %s", v.VersionNumber, v.ID, all[i-1].VersionNumber, all[i-1].ID)
		}
	}
	p, err := s.GetPrompt(ctx, promptID)
	is.NoErr(err)                          // get prompt
	is.Equal(p.LatestVersionID, all[0].ID) // latest_version_id is the newest version
	for _, num := range []int{1, n} {
		v, err := s.GetVersion(ctx, promptID, num)
		is.NoErr(err)                 // get version by number
		is.Equal(v.ID, all[n-num].ID) // the one listed
	}
}

// The writer processes of TestCreateVersionAcrossProcesses are this test
// binary run again with childVar set; TestMain hands them to runChild.
const childVar = "SQLSTORE_TEST_WRITER"

// TestCreateVersionAcrossProcesses: several processes, each with writers
// of its own and a clock of its own, create versions of one prompt at once
// and point production at each. The prompt ends with versions 1..N, no
// gap, ids increasing with numbers; every activation got a revision of
// its own, larger than its writer's previous one, and the revision moved
// on at least once per write.
func TestCreateVersionAcrossProcesses(t *testing.T) {
	is := is.New(t)
	s := newSQLStore(t)
	_, p := fixture(t, s)
	skews := []time.Duration{-time.Second, 0, 0, time.Second}
	const writers, each = 4, 25
	type child struct {
		cmd    *exec.Cmd
		stdout bytes.Buffer
		stderr bytes.Buffer
	}
	children := make([]*child, len(skews))
	for i, skew := range skews {
		c := &child{cmd: exec.Command(os.Args[0], "-test.run=^$")}
		c.cmd.Env = append(os.Environ(),
			childVar+"=1",
			"SQLSTORE_TEST_SCHEMA="+s.Schema(),
			"SQLSTORE_TEST_PROMPT="+p.ID,
			"SQLSTORE_TEST_SKEW="+skew.String(),
			"SQLSTORE_TEST_WRITERS="+strconv.Itoa(writers),
			"SQLSTORE_TEST_EACH="+strconv.Itoa(each),
		)
		c.cmd.Stdout, c.cmd.Stderr = &c.stdout, &c.stderr
		children[i] = c
	}
	cmds := make([]*exec.Cmd, len(children))
	for i, c := range children {
		cmds[i] = c.cmd
	}
	startTogether(t, cmds) // the writer processes
	retried := 0
	seen := map[int64]bool{} // the revisions the activations returned
	for i, c := range children {
		if err := c.cmd.Wait(); err != nil {
			t.Fatalf("writer process %d: %v\n%s", i, err, c.stderr.String())
		}
		lines := strings.Split(strings.TrimSpace(c.stdout.String()), "\n")
		n, err := strconv.Atoi(strings.TrimPrefix(lines[0], "retried "))
		is.NoErr(err) // the process reports its retries
		retried += n
		is.Equal(len(lines), 1+writers) // and each writer's revisions
		for _, line := range lines[1:] {
			var last int64
			for _, f := range strings.Fields(line) {
				r, err := strconv.ParseInt(f, 10, 64)
				is.NoErr(err)
				is.True(r > last) // a writer's revisions only grow
				is.True(!seen[r]) // no two changes share a revision
				seen[r], last = true, r
			}
		}
	}
	total := len(skews) * writers * each
	is.Equal(len(seen), total) // every activation reported
	t.Logf("%d processes, %d versions, %d retried under the lock", len(skews), total, retried)
	checkVersions(t, s, p.ID, total)
	end, err := s.GetPrompt(context.Background(), p.ID)
	is.NoErr(err)
	is.True(end.Revision-p.Revision >= int64(2*total)) // moved on by each version and each activation
}

// TestSwapAcrossProcesses: several processes, each with several
// goroutines, point production at versions of their own at once, all
// expecting the same revision. Exactly one of them wins, and only its
// change is recorded.
func TestSwapAcrossProcesses(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s := newSQLStore(t)
	_, p := fixture(t, s)
	const processes, writers = 4, 4
	for range processes * writers {
		_, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "c"})
		is.NoErr(err)
	}
	rev, err := s.GetPrompt(ctx, p.ID)
	is.NoErr(err)
	outs := runChildren(t, "swap", s.Schema(), p.ID, processes, writers, func(i int) []string {
		return []string{"SQLSTORE_TEST_REVISION=" + strconv.FormatInt(rev.Revision, 10), "SQLSTORE_TEST_FIRST=" + strconv.Itoa(1+i*writers)}
	})
	won, lost := 0, 0
	for i, out := range outs {
		for _, line := range strings.Fields(out) {
			switch line {
			case "won":
				won++
			case "lost":
				lost++
			default:
				t.Fatalf("swapping process %d: %q", i, out)
			}
		}
	}
	is.Equal(won, 1)                    // exactly one swap won
	is.Equal(lost, processes*writers-1) // every other one was refused
	history, _, err := s.ListDeployments(ctx, prompts.DeploymentFilter{PromptID: p.ID})
	is.NoErr(err)
	is.Equal(len(history), 1) // and only the winner's change is recorded
	a, err := s.GetActive(ctx, p.ID, prompts.Production)
	is.NoErr(err)
	is.Equal(a.ActiveVersion.VersionNumber, *history[0].VersionNumber) // the one active
}

// runChildren runs n processes of this test binary in mode (childVar), on
// schema and the prompt, each with writers goroutines, all beginning at
// the same moment; env adds process i's own variables. It returns their
// outputs, and fails the test when one fails.
func runChildren(t *testing.T, mode, schema, promptID string, n, writers int, env func(i int) []string) []string {
	t.Helper()
	cmds := make([]*exec.Cmd, n)
	outs := make([]*bytes.Buffer, n)
	for i := range cmds {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(),
			childVar+"="+mode,
			"SQLSTORE_TEST_SCHEMA="+schema,
			"SQLSTORE_TEST_PROMPT="+promptID,
			"SQLSTORE_TEST_WRITERS="+strconv.Itoa(writers),
		)
		if env != nil {
			cmd.Env = append(cmd.Env, env(i)...)
		}
		outs[i] = new(bytes.Buffer)
		cmd.Stdout, cmd.Stderr = outs[i], outs[i]
		cmds[i] = cmd
	}
	startTogether(t, cmds)
	texts := make([]string, n)
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("%s process %d: %v\n%s", mode, i, err, outs[i])
		}
		texts[i] = outs[i].String()
	}
	return texts
}

// startTogether starts child processes of this test binary and lets them
// begin their work at the same moment: each says on its file descriptor 3
// that it is ready (waitForStart), then waits for its standard input to
// close, which happens to all of them at once, once all are ready (or
// gone: a child that failed closes its end, and its Wait reports it).
func startTogether(t *testing.T, cmds []*exec.Cmd) {
	t.Helper()
	readies := make([]*os.File, len(cmds))
	gos := make([]io.WriteCloser, len(cmds))
	for i, cmd := range cmds {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.ExtraFiles = []*os.File{w}
		if gos[i], err = cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		_ = w.Close() // the child's now
		readies[i] = r
	}
	for _, r := range readies {
		_, _ = r.Read(make([]byte, 1)) // a byte, or the end of a child gone
		_ = r.Close()
	}
	for _, g := range gos {
		_ = g.Close() // go
	}
}

// waitForStart is a child's half of startTogether: it says it is ready,
// and returns when all may begin.
func waitForStart() error {
	ready := os.NewFile(3, "ready")
	if ready == nil {
		return errors.New("no file descriptor 3 to say it is ready on")
	}
	if _, err := ready.Write([]byte{1}); err != nil {
		return err
	}
	_ = ready.Close()
	_, err := io.Copy(io.Discard, os.Stdin) // until the parent closes it
	return err
}

// openChild opens the Store of a child process: on the schema
// SQLSTORE_TEST_SCHEMA, with SQLSTORE_TEST_WRITERS connections, connected;
// then it waits until all the children begin together (waitForStart).
// closeAll closes the Store and its pool.
func openChild() (s *sqlstore.Store, writers int, closeAll func(), err error) {
	env := func(k string) string { return os.Getenv("SQLSTORE_TEST_" + k) }
	writers, err = strconv.Atoi(env("WRITERS"))
	if err != nil {
		return nil, 0, nil, err
	}
	db, err := sqlx.Open("postgres", os.Getenv(databaseURLVar))
	if err != nil {
		return nil, 0, nil, err
	}
	db.SetMaxOpenConns(writers)
	if s, err = sqlstore.New(db, sqlstore.WithSchema(env("SCHEMA"))); err != nil {
		db.Close()
		return nil, 0, nil, err
	}
	closeAll = func() { s.Close(); db.Close() }
	if err := db.Ping(); err != nil { // connect before the start
		closeAll()
		return nil, 0, nil, err
	}
	if err := waitForStart(); err != nil {
		closeAll()
		return nil, 0, nil, err
	}
	return s, writers, closeAll, nil
}

// runSwapChild is a process of TestSwapAcrossProcesses: each of its
// goroutines tries one swap, and it prints "won" or "lost" for each.
func runSwapChild() int {
	env := func(k string) string { return os.Getenv("SQLSTORE_TEST_" + k) }
	revision, err1 := strconv.ParseInt(env("REVISION"), 10, 64)
	first, err2 := strconv.Atoi(env("FIRST"))
	for _, err := range []error{err1, err2} {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
	}
	s, writers, closeAll, err := openChild()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer closeAll()
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		results []string
		failed  bool
	)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.Activate(context.Background(), prompts.Activation{PromptID: env("PROMPT"), Environment: prompts.Production,
				VersionNumber: prompts.Some(first + w), Change: prompts.Change{Actor: "swapper", IfRevision: revision}})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				results = append(results, "won")
			case errors.Is(err, prompts.ErrPreconditionFailed):
				results = append(results, "lost")
			default:
				fmt.Fprintln(os.Stderr, err)
				failed = true
			}
		}()
	}
	wg.Wait()
	if failed {
		return 1
	}
	fmt.Println(strings.Join(results, "\n"))
	return 0
}

// runChild is a writer process: it creates versions with several
// goroutines, prints how many it retried under the lock, and exits 0 if
// every write succeeded.
func runChild() int {
	env := func(k string) string { return os.Getenv("SQLSTORE_TEST_" + k) }
	skew, err1 := time.ParseDuration(env("SKEW"))
	writers, err2 := strconv.Atoi(env("WRITERS"))
	each, err3 := strconv.Atoi(env("EACH"))
	db, err4 := sqlx.Open("postgres", os.Getenv(databaseURLVar))
	for _, err := range []error{err1, err2, err3, err4} {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
	}
	defer db.Close()
	db.SetMaxOpenConns(writers)
	var retries countingHandler
	s, err := sqlstore.New(db, sqlstore.WithSchema(env("SCHEMA")), sqlstore.WithClock(skewedClock(skew)), sqlstore.WithLogger(slog.New(&retries)))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer s.Close()
	if err := db.Ping(); err != nil { // connect before the start
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := waitForStart(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var (
		wg        sync.WaitGroup
		failed    atomic.Int64
		revisions = make([][]string, writers) // per writer, in order
	)
	ctx := context.Background()
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				v, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: env("PROMPT"), Content: "from " + skew.String()})
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					failed.Add(1)
					continue
				}
				a, err := s.Activate(ctx, prompts.Activation{PromptID: v.PromptID, Environment: prompts.Production, VersionID: prompts.Some(v.ID)})
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					failed.Add(1)
					continue
				}
				revisions[w] = append(revisions[w], strconv.FormatInt(a.Revision, 10))
			}
		}()
	}
	wg.Wait()
	fmt.Printf("retried %d\n", retries.count.Load())
	for _, r := range revisions {
		fmt.Println(strings.Join(r, " "))
	}
	if failed.Load() > 0 {
		return 1
	}
	return 0
}

// countingHandler is a slog.Handler that counts the Store's retries of a
// version write under the lock.
type countingHandler struct{ count atomic.Int64 }

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *countingHandler) WithGroup(string) slog.Handler            { return h }
func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "under the prompt's lock") {
		h.count.Add(1)
	}
	return nil
}

// TestCreateVersionSerializableDefault: on a database whose default
// isolation is SERIALIZABLE, racing writers get serialization failures
// where READ COMMITTED would wait; CreateVersion then retries in a READ
// COMMITTED transaction under the lock, and every write succeeds.
func TestCreateVersionSerializableDefault(t *testing.T) {
	is := is.New(t)
	first := newSQLStore(t)
	_, p := fixture(t, first)
	db := openDB(t, 8, "default_transaction_isolation=serializable")
	var level string
	is.NoErr(db.Get(&level, `SHOW transaction_isolation`)) // the pool's sessions
	is.Equal(level, "serializable")                        // are serializable
	s, err := sqlstore.New(db, sqlstore.WithSchema(first.Schema()))
	is.NoErr(err) // a store on them
	defer s.Close()
	const writers, each = 8, 25
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				in := prompts.NewVersion{PromptID: p.ID, Content: "c", Environments: []prompts.Environment{prompts.Production}}
				if _, err := s.CreateVersion(context.Background(), in); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	checkVersions(t, first, p.ID, writers*each)
}

// TestActivateAfterWaiting: a change of what an environment points at that
// waited for another writer's lock on the prompt acts on what that writer
// committed, not on what was there when it began. A transaction of the
// test's own holds the lock and moves the environments while Activate and
// Deactivate wait for it.
func TestActivateAfterWaiting(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	db := database(t)
	s := newSQLStore(t)
	_, p := fixture(t, s)
	for range 2 {
		_, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "c"})
		is.NoErr(err)
	}
	_, err := s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(1)})
	is.NoErr(err) // production at 1, staging at none
	before, err := s.GetPrompt(ctx, p.ID)
	is.NoErr(err)

	schema := pq.QuoteIdentifier(s.Schema())
	other := db.MustBegin()
	defer other.Rollback() //nolint:errcheck // a no-op once committed
	other.MustExec(`SELECT 1 FROM `+schema+`.prompts WHERE id = $1 FOR UPDATE`, p.ID)
	other.MustExec(`UPDATE `+schema+`.environments SET version_number = 2 WHERE prompt_id = $1 AND environment = 'production'`, p.ID)
	other.MustExec(`INSERT INTO `+schema+`.environments VALUES ($1, 'staging', 1, now())`, p.ID)

	activated := make(chan error, 1)
	go func() { // back to 1, which it still was when the other began
		_, err := s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(1)})
		activated <- err
	}()
	deactivated := make(chan error, 1)
	go func() { // nothing, which it still was when the other began
		deactivated <- deactivate(ctx, s, p.ID, prompts.Staging)
	}()
	waitForLockWaiters(t, s.Schema(), 2)
	is.NoErr(other.Commit())
	is.NoErr(<-activated)
	is.NoErr(<-deactivated)

	prod, err := s.GetActive(ctx, p.ID, prompts.Production)
	is.NoErr(err)
	is.Equal(prod.ActiveVersion.VersionNumber, 1) // the activation was not lost
	staging, err := s.GetActive(ctx, p.ID, prompts.Staging)
	is.NoErr(err)
	is.True(staging.ActiveVersion == nil)       // nor the deactivation
	is.True(prod.Revision >= before.Revision+2) // and both moved the revision on
}

// waitForLockWaiters waits until n statements on tables of schema wait for
// a lock.
func waitForLockWaiters(t *testing.T, schema string, n int) {
	t.Helper()
	var waiting int
	poll.For(t, 30*time.Second, fmt.Sprintf("%d statements wait for a lock", n), func() bool {
		err := database(t).Get(&waiting, `SELECT count(*) FROM pg_stat_activity
WHERE datname = current_database() AND wait_event_type = 'Lock' AND strpos(query, $1) > 0`, schema)
		if err != nil {
			t.Fatal(err)
		}
		return waiting >= n
	})
}
