package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"time"

	"github.com/lib/pq"
)

// newSchema returns the name of a schema of its own for the sqlstore
// server (which creates it when it migrates), and a func that drops it.
func newSchema(ctx context.Context, dsn string) (string, func(), error) {
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		return "", nil, fmt.Errorf("-dsn: %w", err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(pingCtx); err != nil {
		db.Close()
		return "", nil, fmt.Errorf("-dsn: %w", err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "prompts_load_" + hex.EncodeToString(b)
	drop := func() {
		defer db.Close()
		// Not ctx: the schema goes after an interrupt too.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := db.ExecContext(ctx, `DROP SCHEMA IF EXISTS `+pq.QuoteIdentifier(schema)+` CASCADE`); err != nil {
			fmt.Fprintf(os.Stderr, "load: dropping schema %s: %v\n", schema, err)
		}
	}
	return schema, drop, nil
}
