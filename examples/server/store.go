package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq" // the PostgreSQL driver, registered as "postgres"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/memstore"
	"github.com/promptkit/prompts/sqlstore"
)

// openStore returns the store the DSN names: memory when it is empty, else
// PostgreSQL, migrated. The returned func releases it.
func openStore(ctx context.Context, dsn, schema string, logger *slog.Logger) (prompts.Store, func(), error) {
	if dsn == "" {
		return memstore.New(), func() {}, nil
	}
	db, err := sqlx.Open("postgres", dsn)
	if err != nil {
		return nil, nil, fmt.Errorf("-dsn: %w", err)
	}
	db.SetMaxOpenConns(20)
	db.SetMaxIdleConns(20)
	db.SetConnMaxIdleTime(5 * time.Minute)
	store, err := sqlstore.New(db, sqlstore.WithSchema(schema), sqlstore.WithLogger(logger))
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	closeAll := func() {
		store.Close()
		db.Close()
	}
	migrateCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := store.Migrate(migrateCtx); err != nil {
		closeAll()
		return nil, nil, fmt.Errorf("migrating the database: %w", err)
	}
	return store, closeAll, nil
}
