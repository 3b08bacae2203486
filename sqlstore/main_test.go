package sqlstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/sqlstore"
)

// The tests need PostgreSQL. Its URL comes from this variable, for
// instance postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable; each
// store a test makes lives in a schema of its own, dropped afterwards.
const databaseURLVar = "PROMPTS_TEST_DATABASE_URL"

const skipMessage = "sqlstore tests need PostgreSQL: set " + databaseURLVar +
	"=postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable (any database the user may create schemas in; docs/testing.md)"

// testDB is the pool the tests share, open when databaseURLVar is set.
var testDB *sqlx.DB

func TestMain(m *testing.M) {
	switch os.Getenv(childVar) {
	case "":
	case "swap":
		os.Exit(runSwapChild()) // a process of TestSwapAcrossProcesses
	case "idempotency":
		os.Exit(runIdempotencyChild()) // a process of TestIdempotencyAcrossProcesses
	case "events":
		os.Exit(runEventsChild()) // a process of TestEventsInCommitOrderAcrossProcesses
	case "claims":
		os.Exit(runClaimsChild()) // a process of TestClaimDeliveriesAcrossProcesses
	default:
		os.Exit(runChild()) // a writer process of TestCreateVersionAcrossProcesses
	}
	if url := os.Getenv(databaseURLVar); url != "" {
		db, err := sqlx.Open("postgres", url)
		if err != nil {
			fmt.Fprintln(os.Stderr, "sqlstore tests:", err)
			os.Exit(1)
		}
		// storetest makes a store per subtest; they share this small pool.
		db.SetMaxOpenConns(8)
		db.SetMaxIdleConns(8)
		testDB = db
	}
	code := m.Run()
	if testDB != nil {
		_ = testDB.Close()
	}
	os.Exit(code)
}

// requireVar, when set (CI sets it), turns the skip without a database
// into a failure.
const requireVar = "PROMPTS_TEST_REQUIRE_DATABASE"

// database returns the shared pool, or skips the test when no database is
// configured (fails it when requireVar is set).
func database(t testing.TB) *sqlx.DB {
	t.Helper()
	if testDB == nil {
		if os.Getenv(requireVar) != "" {
			t.Fatal(requireVar + " is set: " + skipMessage)
		}
		t.Skip(skipMessage)
	}
	return testDB
}

// openDB opens a pool of its own, with params added to the URL's query
// (e.g. "application_name=x"), closed when the test ends.
func openDB(t testing.TB, maxConns int, params string) *sqlx.DB {
	t.Helper()
	database(t)
	url := os.Getenv(databaseURLVar)
	if params != "" {
		sep := "?"
		if strings.Contains(url, "?") {
			sep = "&"
		}
		url += sep + params
	}
	db, err := sqlx.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// newStore is the constructor storetest.Run takes: a migrated store in a
// fresh schema.
func newStore(t *testing.T, clock prompts.Clock) prompts.Store {
	return newSQLStore(t, sqlstore.WithClock(clock))
}

// newSQLStore returns a migrated Store in a fresh schema of the shared
// pool, closed and dropped when the test ends.
func newSQLStore(t testing.TB, opts ...sqlstore.Option) *sqlstore.Store {
	t.Helper()
	db := database(t)
	schema := freshSchema(t, db)
	s, err := sqlstore.New(db, append([]sqlstore.Option{sqlstore.WithSchema(schema)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

// freshSchema returns the name of a schema no one uses, dropped (if it was
// created) when the test ends.
func freshSchema(t testing.TB, db *sqlx.DB) string {
	t.Helper()
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	schema := "prompts_test_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := db.ExecContext(ctx, `DROP SCHEMA IF EXISTS `+pq.QuoteIdentifier(schema)+` CASCADE`); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return schema
}

// fixedClock returns a clock that stands at t.
func fixedClock(t time.Time) prompts.Clock { return func() time.Time { return t } }

// skewedClock returns a clock d ahead of the real one.
func skewedClock(d time.Duration) prompts.Clock { return func() time.Time { return time.Now().Add(d) } }

// fixture makes a project and a prompt in s.
func fixture(t testing.TB, s prompts.Store) (prompts.Project, prompts.Prompt) {
	t.Helper()
	is := is.New(t)
	ctx := context.Background()
	proj, err := s.CreateProject(ctx, prompts.NewProject{Name: "Project " + prompts.NewID(time.Now())})
	is.NoErr(err) // create project
	p, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "greeting", Name: "Greeting"})
	is.NoErr(err) // create prompt
	return proj, p
}

// deactivate points env of the prompt at no version.
func deactivate(ctx context.Context, s prompts.Store, promptID string, env prompts.Environment) error {
	_, err := s.Deactivate(ctx, prompts.Deactivation{PromptID: promptID, Environment: env})
	return err
}
