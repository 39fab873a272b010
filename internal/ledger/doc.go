// Package ledger is the only code that writes balances. Every movement of
// money is a journal entry whose postings sum to zero per currency; each
// posting changes one bucket of one account. Merchant-facing buckets
// (available, incoming, outgoing, rolling_reserve) never go below zero unless
// the movement says so; the counterpart buckets (external: money that came
// from or went to the outside world; fees: the platform's revenue) may.
//
// # Buckets and balance records
//
// Balances are bucket rows updated in the same transaction that appends the
// postings they sum; each posting records the running balance. Verify (payd
// ledger verify) checks that the two agree, and every other invariant.
//
// A transaction that changes rows of its own and posts, again and again (a
// batch of payout outcomes; every job that posts), takes LockAccount first,
// so that all such transactions wait on the account before anything else; a
// change that posts to two accounts takes both in account id order
// (LockAccounts), so that two in opposite directions cannot deadlock.
//
// # Hot accounts
//
// On PostgreSQL every bucket has a principal row and spreadSlots (4) slots.
// A payin's receipt, its clearing and its reserve's release are spread by
// the payin (Entry.Spread): their credits go to the payin's slot and their
// debits come back out of it, and each slot has its own lane, so receipts
// into one account commit side by side instead of one lane at a time. A debit
// that no one slot is known to cover (a payout, a refund) is taken from the
// principal row when it holds it, so that it locks no slot: the slots are
// the receipts' lanes', and work that locks the account (its principal rows)
// and then slots would deadlock with a slot's lane, whose group commit
// takes its rows in the order its items come. Only when the principal row
// falls short does the debit lock every slot of the bucket, check their sum
// and gather it into the principal row. A balance is the sum of its rows;
// Verify checks every row, so it stays exact.
// SQLite, with one writer, keeps one row per bucket.
package ledger
