package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq" // the PostgreSQL driver, registered as "postgres"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
	"github.com/promptkit/prompts/memstore"
	"github.com/promptkit/prompts/sqlstore"
)

// opened is the store the server answers from.
type opened struct {
	store   prompts.Store
	ping    func(ctx context.Context) error // whether the store answers now
	state   func() string                   // a word on its state, for /readyz
	release func()
	// keepKey keeps the hash of a generated key where every replica
	// reads it (see sqlstore's KeepServerKey); nil without a database.
	keepKey func(ctx context.Context, name, hash string) (string, error)
}

// openStore returns the store cfg names: the embedded store, on the file
// cfg.data (in memory only when that is empty), when cfg.dsn is empty;
// else PostgreSQL, waited for up to cfg.waitDB, migrated, behind a read
// cache (unless cfg.cache is off) that a LISTEN/NOTIFY feed keeps fresh,
// run on a goroutine until ctx ends or release is called.
func openStore(ctx context.Context, cfg config, logger *slog.Logger, m *metrics) (opened, error) {
	if cfg.dsn == "" && cfg.data == "" {
		return opened{
			store:   memstore.New(memstore.WithEventRetention(cfg.eventRetention)),
			ping:    func(context.Context) error { return nil },
			state:   func() string { return "memory" },
			release: func() {},
		}, nil
	}
	if cfg.dsn == "" {
		path, err := filepath.Abs(cfg.data)
		if err != nil {
			return opened{}, fmt.Errorf("-data: %w", err)
		}
		s, err := memstore.Open(path, memstore.WithLogger(logger), memstore.WithEventRetention(cfg.eventRetention))
		if err != nil {
			return opened{}, fmt.Errorf("-data: %w", err)
		}
		logger.Info("data file", "path", path)
		return opened{
			store: s,
			ping:  func(context.Context) error { return s.Err() },
			state: func() string { return "file" },
			release: func() {
				if err := s.Close(); err != nil {
					logger.Error("closing the data file", "path", path, "err", err)
				}
			},
		}, nil
	}
	// The Store's connections fail a read or a write that has no answer
	// within twice the request timeout: a database gone silent (stopped
	// processes, a dead network path) cannot hold them forever. Migrations
	// run on a connection of their own, without that limit.
	connector, err := pq.NewConnector(cfg.dsn)
	if err != nil {
		return opened{}, errors.New("-dsn: not a connection string lib/pq can read") // its error would quote a password
	}
	connector.Dialer(sqlstore.Dialer{Timeout: 2 * cfg.requestTimeout})
	db := sqlx.NewDb(sql.OpenDB(connector), "postgres")
	db.SetMaxOpenConns(20)
	db.SetMaxIdleConns(20)
	db.SetConnMaxIdleTime(5 * time.Minute)
	if err := waitForDatabase(ctx, db, cfg.waitDB, logger); err != nil {
		db.Close()
		return opened{}, err
	}
	if err := migrate(ctx, cfg, logger); err != nil {
		db.Close()
		return opened{}, err
	}
	pg, err := sqlstore.New(db, sqlstore.WithSchema(cfg.schema), sqlstore.WithLogger(logger), sqlstore.WithEventRetention(cfg.eventRetention))
	if err != nil {
		db.Close()
		return opened{}, err
	}
	closeAll := func() {
		pg.Close()
		db.Close()
	}
	// The notifications of every replica's writes wake the Store's waiters
	// for events (the streams, the dispatcher), and keep the cache fresh.
	var (
		store prompts.Store = pg
		sink  prompts.Sink  = pg
		c     *cache.Store
	)
	if cfg.cache {
		c = cache.New(pg, cache.WithSize(cfg.cacheMiB<<20))
		m.watchCache(c)
		store, sink = c, prompts.Sinks(c, pg)
	}
	feed := sqlstore.NewFeed(cfg.dsn, sqlstore.WithSchema(cfg.schema), sqlstore.WithLogger(logger))
	feedCtx, stopFeed := context.WithCancel(ctx)
	fed := make(chan struct{})
	go func() {
		defer close(fed)
		if err := feed.Run(feedCtx, sink); err != nil && !errors.Is(err, context.Canceled) {
			logger.Error("the feed stopped; reads go to the database, and other replicas' events are seen within a second", "err", err)
		}
	}()
	state := func() string {
		switch {
		case c == nil:
			return "database"
		case c.Stats().Lost:
			// The replica answers right (its reads go to the database);
			// it only says so.
			return "database; cache feed lost, reads go to the database"
		}
		return "database; cache fed"
	}
	return opened{store: store, ping: pg.Ping, state: state, release: func() { stopFeed(); <-fed; closeAll() }, keepKey: pg.KeepServerKey}, nil
}

// migrate brings the schema up to date, on a connection of its own.
func migrate(ctx context.Context, cfg config, logger *slog.Logger) error {
	db, err := sqlx.Open("postgres", cfg.dsn)
	if err != nil {
		return errors.New("-dsn: not a connection string lib/pq can read")
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	s, err := sqlstore.New(db, sqlstore.WithSchema(cfg.schema), sqlstore.WithLogger(logger))
	if err != nil {
		return err
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if err := s.Migrate(ctx); err != nil {
		return fmt.Errorf("migrating the database: %w", err)
	}
	return nil
}

// waitForDatabase returns once the database answers a ping, trying with a
// backoff from 250 ms to 5 s for up to limit, and logging every failed
// attempt. A database that answers with a refusal (a wrong password, a
// database that does not exist) is not waited for: the operator must act.
func waitForDatabase(ctx context.Context, db *sqlx.DB, limit time.Duration, logger *slog.Logger) error {
	start := time.Now()
	delay := 250 * time.Millisecond
	for attempt := 1; ; attempt++ {
		pingCtx, cancel := context.WithTimeout(ctx, max(min(3*time.Second, limit-time.Since(start)), 100*time.Millisecond))
		err := pingWithin(pingCtx, db)
		cancel()
		if err == nil {
			if attempt > 1 {
				logger.Info("database reachable", "attempts", attempt, "waited", time.Since(start).Round(time.Millisecond))
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if refused(err) {
			return fmt.Errorf("the database refused the connection: %w", err)
		}
		left := limit - time.Since(start)
		if left <= 0 {
			return fmt.Errorf("the database did not answer within -wait-db %s (%d attempts): %w", limit, attempt, err)
		}
		wait := min(delay, left)
		logger.Warn("waiting for the database", "attempt", attempt, "retry_in", wait.Round(time.Millisecond), "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		delay = min(2*delay, 5*time.Second)
	}
}

// refused reports whether PostgreSQL answered err itself for a reason
// that waiting does not mend (a wrong password, a database that does not
// exist, a parameter it does not know): any answer of the server but
// starting up (57P03), shutting down (57P01-57P02), too many connections
// (53300) and connection errors (class 08), which pass.
func refused(err error) bool {
	var pe *pq.Error
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Code {
	case "57P01", "57P02", "57P03", "53300":
		return false
	}
	return !strings.HasPrefix(string(pe.Code), "08")
}

// pingWithin pings db, and returns by ctx's end even when the database
// is silent (lib/pq's connection setup can outlast a context).
func pingWithin(ctx context.Context, db *sqlx.DB) error {
	done := make(chan error, 1)
	go func() { done <- db.PingContext(ctx) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
