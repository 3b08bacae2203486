package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"github.com/lib/pq"
	"github.com/lib/pq/pqerror"

	"github.com/promptkit/prompts"
)

// Constraint names the Store tells apart (migrations/).
const (
	constraintSlug      = "projects_slug_key"
	constraintPromptKey = "prompts_project_key_key"
)

// fail turns an error of the driver or of database/sql into the domain's
// error: the context's end when ctx is done, unavailable when the database
// cannot be reached or asks to be retried, internal otherwise. Errors that are
// already *prompts.Error pass unchanged. Errors are recognised by type and
// SQLSTATE, never by message text.
func (s *Store) fail(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var domain *prompts.Error
	if errors.As(err, &domain) {
		return err
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		// The query was cancelled (57014) or the connection dropped because
		// ctx ended; either way, the cause is the context.
		return prompts.ContextDone(ctxErr)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return prompts.ContextDone(err)
	}
	if errors.Is(err, errClosed) {
		return prompts.Internal(err)
	}
	if unavailable(err) {
		return prompts.Unavailable(err)
	}
	if pqErr := pq.As(err, pqerror.UndefinedTable, pqerror.UndefinedColumn, pqerror.InvalidSchemaName); pqErr != nil {
		return prompts.Internal(fmt.Errorf("sqlstore: schema %q is not migrated (run Store.Migrate): %w", s.schema, err))
	}
	return prompts.Internal(err)
}

// unavailable reports whether err means that the database cannot be
// reached, or cannot serve now but may soon: worth a retry.
func unavailable(err error) bool {
	switch {
	case errors.Is(err, driver.ErrBadConn), // lib/pq: a broken connection, a FATAL error
		errors.Is(err, sql.ErrConnDone),
		errors.Is(err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE):
		return true
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return true // dial, DNS, read and write errors, timeouts
	}
	pqErr := pq.As(err)
	if pqErr == nil {
		return false
	}
	switch pqErr.Code.Class() {
	case pqerror.ClassConnectionException, // 08: connection failures
		pqerror.ClassInsufficientResources: // 53: out of connections, memory, disk
		return true
	}
	switch pqErr.Code {
	case pqerror.AdminShutdown, // 57P01: terminated (pg_terminate_backend, shutdown)
		pqerror.CrashShutdown,          // 57P02
		pqerror.CannotConnectNow,       // 57P03: starting up, in recovery
		pqerror.QueryCanceled,          // 57014 without a cancelled ctx: statement_timeout
		pqerror.LockNotAvailable,       // 55P03: lock_timeout
		pqerror.TRSerializationFailure, // 40001
		pqerror.TRDeadlockDetected,     // 40P01
		pqerror.ReadOnlySQLTransaction: // 25006: a standby, during a failover
		return true
	}
	return false
}

// isUniqueViolation reports whether err is a violation of the named unique
// constraint.
func isUniqueViolation(err error, constraint string) bool {
	pqErr := pq.As(err, pqerror.UniqueViolation)
	return pqErr != nil && pqErr.Constraint == constraint
}

// isSerializationFailure reports whether err is a serialization failure: a
// database whose default isolation is REPEATABLE READ or SERIALIZABLE
// answers so when writers of one row race.
func isSerializationFailure(err error) bool {
	return pq.As(err, pqerror.TRSerializationFailure) != nil
}
