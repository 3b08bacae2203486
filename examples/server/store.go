package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq" // the PostgreSQL driver, registered as "postgres"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
	"github.com/promptkit/prompts/memstore"
	"github.com/promptkit/prompts/sqlstore"
)

// openStore returns the store the DSN names: memory when it is empty, else
// PostgreSQL, migrated, behind a read cache of cacheSize bytes (none when
// 0) that a LISTEN/NOTIFY feed keeps fresh, run on a goroutine until ctx
// ends. The returned func releases it.
func openStore(ctx context.Context, dsn, schema string, cacheSize int64, logger *slog.Logger) (prompts.Store, func(), error) {
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
	// A database call can wait (on a lock, on a slow database); a memstore
	// call never does, and a read the cache answers neither.
	timed := deadlineStore{next: store, d: requestTimeout}
	if cacheSize == 0 {
		return timed, closeAll, nil
	}
	c := cache.New(timed, cache.WithSize(cacheSize))
	feed := sqlstore.NewFeed(dsn, sqlstore.FeedSchema(schema), sqlstore.FeedLogger(logger))
	feedCtx, stopFeed := context.WithCancel(ctx)
	fed := make(chan struct{})
	go func() {
		defer close(fed)
		if err := feed.Run(feedCtx, c); err != nil && !errors.Is(err, context.Canceled) {
			logger.Error("the cache's feed stopped; reads go to the database", "err", err)
		}
	}()
	return c, func() { stopFeed(); <-fed; closeAll() }, nil
}
