package sqlstore

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/lib/pq"
	"github.com/lib/pq/pqerror"

	"github.com/promptkit/prompts"
)

// The migrations, applied in the order of their number: NNNN_name.sql. A
// migration, once released, never changes; a change of schema is a new file.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded migrations, in order.
func migrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		name := e.Name()
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 || path.Ext(name) != ".sql" {
			return nil, fmt.Errorf("sqlstore: migration file %s is not named NNNN_name.sql", name)
		}
		b, err := fs.ReadFile(migrationFiles, "migrations/"+name)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: name, sql: string(b)})
	}
	slices.SortFunc(out, func(a, b migration) int { return a.version - b.version })
	for i := 1; i < len(out); i++ {
		if out[i].version == out[i-1].version {
			return nil, fmt.Errorf("sqlstore: two migrations numbered %d", out[i].version)
		}
	}
	return out, nil
}

// Migrate brings the Store's schema up to date: it creates the schema if
// needed and applies the migrations not yet applied, each in its own
// transaction, recording each in the table schema_migrations of the schema.
// It is idempotent, and safe to run from several processes at once: each
// transaction first takes an advisory lock derived from the schema's name,
// so they apply one at a time and the later ones find the work done. When
// nothing is left to do it only reads, so a role without the right to
// create may run it once the schema is up to date. The database must be in
// the UTF8 encoding. Errors are *prompts.Error, as the Store's are.
//
// New never runs it: run it at start, or from a deploy step.
func (s *Store) Migrate(ctx context.Context) error {
	_, err := bounded(ctx, func() (struct{}, error) { return struct{}{}, s.migrateAll(ctx) })
	return err
}

func (s *Store) migrateAll(ctx context.Context) error {
	all, err := migrations()
	if err != nil {
		return prompts.Internal(err)
	}
	// Every text the Store keeps is UTF-8; a database in another encoding
	// would refuse some of it, call by call, as internal errors.
	var encoding string
	if err := s.db.GetContext(ctx, &encoding, `SELECT current_setting('server_encoding')`); err != nil {
		return s.fail(ctx, err)
	}
	if encoding != "UTF8" {
		return prompts.Internal(fmt.Errorf("sqlstore: the database's encoding is %s; the Store needs UTF8 (CREATE DATABASE ... ENCODING 'UTF8')", encoding))
	}
	applied, err := s.appliedMigrations(ctx)
	if err != nil {
		return s.fail(ctx, err)
	}
	for _, m := range all {
		if applied[m.version] {
			continue
		}
		if err := s.migrate(ctx, m); err != nil {
			return s.fail(ctx, fmt.Errorf("sqlstore: migration %s: %w", m.name, err))
		}
	}
	return nil
}

// appliedMigrations returns the versions recorded as applied; none when the
// schema or the table does not exist yet.
func (s *Store) appliedMigrations(ctx context.Context) (map[int]bool, error) {
	var versions []int
	err := s.db.SelectContext(ctx, &versions, `SELECT version FROM `+s.quoted()+`.schema_migrations`)
	if pq.As(err, pqerror.UndefinedTable, pqerror.InvalidSchemaName) != nil {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	applied := make(map[int]bool, len(versions))
	for _, v := range versions {
		applied[v] = true
	}
	return applied, nil
}

// migrate applies m in one transaction, under the schema's advisory lock,
// unless another process applied it first.
func (s *Store) migrate(ctx context.Context, m migration) (err error) {
	tx, err := s.db.BeginTxx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	// Everything below, CREATE SCHEMA IF NOT EXISTS included (it races with
	// itself), runs under the lock; it is released when the transaction
	// ends, on commit, rollback or a dropped connection alike.
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, s.lockKey); err != nil {
		return err
	}
	q := s.quoted()
	if _, err := tx.ExecContext(ctx, `CREATE SCHEMA IF NOT EXISTS `+q); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+q+`.schema_migrations (
	version    integer PRIMARY KEY,
	name       text NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT now()
)`); err != nil {
		return err
	}
	var done bool
	if err := tx.GetContext(ctx, &done, `SELECT EXISTS (SELECT 1 FROM `+q+`.schema_migrations WHERE version = $1)`, m.version); err != nil {
		return err
	}
	if done {
		return tx.Commit()
	}
	// The migration's SQL names tables without a schema.
	if _, err := tx.ExecContext(ctx, `SET LOCAL search_path TO `+q); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO `+q+`.schema_migrations (version, name) VALUES ($1, $2)`, m.version, m.name); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	s.log.LogAttrs(ctx, slog.LevelInfo, "sqlstore: migration applied",
		slog.String("schema", s.schema), slog.String("migration", m.name))
	return nil
}

func (s *Store) quoted() string { return pq.QuoteIdentifier(s.schema) }
