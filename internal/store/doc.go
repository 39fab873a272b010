/*
Package store is payd's database: opening it, write transactions, the reads
beside them, and every place where the databases payd runs on differ.
Every other package writes plain SQL with $N placeholders, which both
dialects accept, and asks store for what differs by name.

# Dialects

payd runs on SQLite (pure Go, embedded, the default: WAL, its log flushed
after each commit, one writer connection and a pool of read-only ones) and on PostgreSQL,
which several payd processes share. Citus is PostgreSQL distributed by
merchant: the PostgreSQL dialect, which says so (DB.Distributed).

A dialect is a driver (driver.go), after River's riverdriver: the driver
answers what differs for the whole database, and its conn is one write
transaction's way to the server. Each has one implementation a dialect,
readable top to bottom in its own file, sqlite.go and postgres.go; no other
file of the package branches on which database it is, and no other package
does (TestDialectsStayInStore). What other packages need of the
difference is a named operation, named for what it means:

  - DB.ForUpdate, DB.ForUpdateOf and DB.SkipLocked: row locks, empty on
    SQLite, whose one writer serialises;
  - DB.SkipLockedAcross and DB.RecheckAcross: a claim that spans
    merchants, which Citus cannot lock, so its update checks again;
  - DB.OneWriter: every write on one connection, one transaction at a
    time (SQLite), so that nothing needs spreading, lanes or leases;
  - DB.Distributed: merchants' rows spread over nodes (Citus);
  - Tx.LockKey and Tx.TryLockKey: a transaction's lock on a key, where no
    row can be locked (advisory locks; nothing on SQLite);
  - Tx.RelaxCommit, Tx.PlanEachTime: PostgreSQL's per-transaction
    settings, nothing on SQLite.

# Transactions

Do and DB.Exec run a function in one write transaction on a Tx, which is
the same on every dialect. A failure PostgreSQL may cure by running it
again (a serialization failure, a deadlock, an id drawn twice) runs it
again, up to maxAttempts: the function must be pure but for its
transaction. Tx.AfterCommit registers what must happen only once the
writes are durable (waking a worker); Tx.Savepoint runs work that may fail
alone.

# Pipelining

On PostgreSQL every statement is a round trip, and in a merchant's lane
round trips bound the throughput. A statement whose answer its caller does
not need at once is sent ahead (Tx.Send, Tx.SendOne, Tx.InsertDrawn): it is
queued and goes to the server in one batch with the next statement that
needs an answer (Tx.QueryRowContext, Tx.Query, Tx.ExecContext), with
ReadSent, with a savepoint's release, or with the COMMIT. Statements still
run in the order they were written; a queued statement's error fails the
transaction, however its caller words the errors that follow.

SQLite queues the same way and runs the queue at the same points, though a
statement there costs no round trip (pipeline.go): the two dialects differ
only in how a batch reaches the database, never in when a statement runs.

# Pending reads

A read sent ahead returns a typed Pending (SendRow, SendValue, SendQuery,
SendRowLate). Its Get fails with ErrNotRun until the statement has run,
and the transaction with it, on every database: a value read too early is
an error in every test run, never a zero that reads as data on one dialect
and is right on the other.

	sent, err := store.SendValue[int64](ctx, tx, `SELECT reserve_bps FROM accounts WHERE id = $1 AND merchant_id = $2`, id, merchantID)
	if err != nil {
		return err
	}
	if _, err := ledger.Post(ctx, tx, entry); err != nil { // carries the read to the server
		return err
	}
	if err := tx.ReadSent(ctx); err != nil { // sends nothing when the post did
		return err
	}
	bps, err := sent.Get()

# Group commit and lanes

Every commit waits for the disk, and on a hot account every transaction
waits for the one before it to release its rows. Transactions that queue
up behind each other in a lane are committed together (batch.go): one
BEGIN, each in a savepoint of its own (one that fails is rolled back to it
alone), one COMMIT for all, acknowledged only after it. On SQLite every
write goes through one lane; on PostgreSQL transactions run side by side
unless their context names one (WithLane, MerchantLane). A transaction that
starts another of its own lane from inside itself would wait for ever for
the writer it holds: Do refuses it with ErrNested.

# Reads, keys, schema

DB.Read runs reads outside a transaction, on SQLite on the read pool, which
WAL lets read beside the writer. Every merchant-owned row is keyed by its
merchant; a key unique across merchants is claimed in global_keys
(keys.go), and every statement names its merchant
(TestStatementsNameTheirMerchant), so that on Citus each is routed to one
merchant's node.

The schema is package migrate's (store/migrate: the embedded migrations,
the Citus splitter and distribution), which DB.Migrate runs; package dbcopy
(store/dbcopy) copies a whole database into another (payd copy); package
storetest opens throwaway databases of every dialect for tests.
*/
package store
