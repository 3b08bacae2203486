package sqlstore_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq" // the "postgres" driver

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/sqlstore"
)

// An application opens the pool, builds the Store on it, migrates once at
// start, and reads its prompts by key in the environment it runs in. (This
// example needs a database, so it is compiled but not run.)
func Example() {
	ctx := context.Background()
	db, err := sqlx.Open("postgres", os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close() // the pool is the application's
	db.SetMaxOpenConns(20)

	store, err := sqlstore.New(db, sqlstore.WithSchema("prompts"))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close() // releases the prepared statements
	if err := store.Migrate(ctx); err != nil {
		log.Fatal(err) // every replica may run it at once
	}

	projectID := os.Getenv("PROMPTS_PROJECT_ID")
	p, err := store.GetActiveByKey(ctx, projectID, "support/greeting", prompts.Production)
	switch {
	case prompts.ErrorCode(err) == prompts.CodeUnavailable:
		log.Print("database unavailable; retry later: ", err)
	case err != nil:
		log.Fatal(err)
	case p.ActiveVersion != nil:
		fmt.Println(p.ActiveVersion.Content)
	}
}
