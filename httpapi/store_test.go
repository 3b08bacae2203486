package httpapi_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"sync"
	"testing"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/memstore"
	"github.com/promptkit/prompts/sqlstore"
)

// The HTTP tests run on memstore. With PROMPTS_TEST_HTTPAPI_STORE=postgres
// (and PROMPTS_TEST_DATABASE_URL) they run on sqlstore instead, each test
// in a schema of its own: what the interface promises holds over either store. CI runs
// both.
const storeVar = "PROMPTS_TEST_HTTPAPI_STORE"

var sqlDB = sync.OnceValues(func() (*sqlx.DB, error) {
	db, err := sqlx.Open("postgres", os.Getenv("PROMPTS_TEST_DATABASE_URL"))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(8)
	return db, nil
})

// newStore returns a fresh, empty store for one test.
func newStore(t testing.TB, clock prompts.Clock) prompts.Store {
	t.Helper()
	switch os.Getenv(storeVar) {
	case "", "memory":
		return memstore.New(memstore.WithClock(clock))
	case "postgres":
	default:
		t.Fatalf("%s=%q: want memory or postgres", storeVar, os.Getenv(storeVar))
	}
	if os.Getenv("PROMPTS_TEST_DATABASE_URL") == "" {
		t.Fatalf("%s=postgres needs PROMPTS_TEST_DATABASE_URL", storeVar)
	}
	db, err := sqlDB()
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	schema := "httpapi_test_" + hex.EncodeToString(b)
	st, err := sqlstore.New(db, sqlstore.WithSchema(schema), sqlstore.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		st.Close()
		if _, err := db.ExecContext(context.Background(), `DROP SCHEMA IF EXISTS "`+schema+`" CASCADE`); err != nil {
			t.Errorf("dropping %s: %v", schema, err)
		}
	})
	if err := st.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return st
}
