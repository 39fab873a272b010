// Package e2e holds payd's end-to-end tests: each starts a real payd (the
// same server.Serve that `payd serve` runs, with its job workers) on a
// loopback port over a fresh database, SQLite always and PostgreSQL when
// PAYD_TEST_POSTGRES_DSN is set, and talks to it over HTTP.
package e2e
