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
// ends. The returned func releases it; ready says whether the store
// answers now (see readiness).
func openStore(ctx context.Context, dsn, schema string, cacheSize int64, logger *slog.Logger) (store prompts.Store, ready readiness, release func(), err error) {
	if dsn == "" {
		return memstore.New(), func(context.Context) (string, error) { return "memory", nil }, func() {}, nil
	}
	db, err := sqlx.Open("postgres", dsn)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("-dsn: %w", err)
	}
	db.SetMaxOpenConns(20)
	db.SetMaxIdleConns(20)
	db.SetConnMaxIdleTime(5 * time.Minute)
	sql, err := sqlstore.New(db, sqlstore.WithSchema(schema), sqlstore.WithLogger(logger))
	if err != nil {
		db.Close()
		return nil, nil, nil, err
	}
	closeAll := func() {
		sql.Close()
		db.Close()
	}
	migrateCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := sql.Migrate(migrateCtx); err != nil {
		closeAll()
		return nil, nil, nil, fmt.Errorf("migrating the database: %w", err)
	}
	ping := func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		return db.PingContext(ctx)
	}
	// A database call can wait (on a lock, on a slow database); a memstore
	// call never does, and a read the cache answers neither.
	timed := deadlineStore{next: sql, d: requestTimeout}
	if cacheSize == 0 {
		return timed, func(ctx context.Context) (string, error) { return "database", ping(ctx) }, closeAll, nil
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
	ready = func(ctx context.Context) (string, error) {
		if err := ping(ctx); err != nil {
			return "database", err
		}
		if c.Stats().Lost {
			// The replica answers right (its reads go to the database);
			// it only says so.
			return "database; cache feed lost, reads go to the database", nil
		}
		return "database; cache fed", nil
	}
	return c, ready, func() { stopFeed(); <-fed; closeAll() }, nil
}

// readiness says whether the store answers now, within a second, with a
// word on its state.
type readiness func(ctx context.Context) (string, error)
