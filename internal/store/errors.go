package store

import (
	"database/sql"
	sqldriver "database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// retryable reports whether Do runs a transaction that failed with err again.
func retryable(err error) bool {
	return errors.Is(err, ErrDrawnTwice) || HasSQLState(err, "40001") || HasSQLState(err, "40P01")
}

// IsNoRows reports whether err says a query found no row.
func IsNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

// IsUniqueViolation reports whether err is a unique-constraint failure on either database.
func IsUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "23505"
	}
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}

// keyLocked is the SQLSTATE of TryLockKey's failure (migration 0026).
const keyLocked = "PD409"

// IsKeyLocked reports whether err is the failure of a transaction whose
// TryLockKey found the key held by another transaction.
func IsKeyLocked(err error) bool { return HasSQLState(err, keyLocked) }

// HasSQLState reports whether err is PostgreSQL's error of SQLSTATE code,
// such as one a payd function raises.
func HasSQLState(err error, code string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == code
}

// IsUnavailable reports whether err says the database cannot be reached
// or cannot take writes right now (a lost connection, a server shutting
// down or restarting, a standby during a failover, a write transaction
// past Options.Timeout) rather than that the
// statement was wrong: the request may be retried once it is back.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return strings.HasPrefix(pgErr.Code, "08") || // connection exception
			pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03" || // shutdown, crash, cannot connect now
			pgErr.Code == "25006" // read-only transaction: a standby
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connectErr) || errors.As(err, &netErr) || errors.Is(err, sqldriver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		pgconn.SafeToRetry(err) || pgconn.Timeout(err) || strings.Contains(err.Error(), "conn closed")
}

// ErrNoDatabase is Open's answer, with Options.MustExist, for a SQLite file
// that does not exist.
var ErrNoDatabase = errors.New("no such database")
