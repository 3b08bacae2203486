package sqlstore_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/sqlstore"
)

// Ping is ready only when the Store can serve: a schema that is migrated.
// One dropped, or not migrated, or not there, is internal (Migrate mends
// it); a database that cannot be reached is unavailable.
func TestPing(t *testing.T) {
	is := is.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := newSQLStore(t)
	is.NoErr(s.Ping(ctx)) // migrated: ready

	_, err := database(t).ExecContext(ctx, `DROP SCHEMA `+pq.QuoteIdentifier(s.Schema())+` CASCADE`)
	is.NoErr(err)
	err = s.Ping(ctx)
	is.Equal(prompts.ErrorCode(err), prompts.CodeInternal) // dropped: not ready
	is.True(strings.Contains(err.Error(), "Migrate"))      // saying what mends it

	db := database(t)
	behind, err := sqlstore.New(db, sqlstore.WithSchema(freshSchema(t, db)))
	is.NoErr(err)
	defer behind.Close()
	err = behind.Ping(ctx)
	is.Equal(prompts.ErrorCode(err), prompts.CodeInternal) // never migrated: not ready
	is.NoErr(sqlstore.MigrateTo(ctx, behind, 4))
	err = behind.Ping(ctx)
	is.Equal(prompts.ErrorCode(err), prompts.CodeInternal) // migrated, but not as far as this release needs
	is.True(strings.Contains(err.Error(), "migration 4"))  // saying where it is
	is.NoErr(behind.Migrate(ctx))
	is.NoErr(behind.Ping(ctx)) // then ready

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	is.NoErr(err)
	addr := ln.Addr().String()
	ln.Close() // a port nobody listens on
	nowhere, err := sqlx.Open("postgres", "postgres://postgres@"+addr+"/x?sslmode=disable")
	is.NoErr(err)
	defer nowhere.Close()
	down, err := sqlstore.New(nowhere)
	is.NoErr(err)
	err = down.Ping(ctx)
	is.True(errors.Is(err, prompts.ErrUnavailable)) // unreachable: unavailable

	is.NoErr(behind.Close())
	err = behind.Ping(ctx)
	is.Equal(prompts.ErrorCode(err), prompts.CodeInternal) // closed
}
