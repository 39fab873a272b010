// Package job is payd's durable work queue, kept in the same database as
// everything else so that work is enqueued in the transaction that makes it
// necessary: if that transaction rolls back, the job never existed.
//
// A job runs inside the transaction that claims it, and is deleted by that
// same transaction: its effect and its completion commit together, so a job
// whose handler only touches the database takes effect exactly once, however
// processes crash. On PostgreSQL, several processes share the queue
// (FOR UPDATE SKIP LOCKED); a job is never run by two at once.
//
// A job belongs to the merchant whose clock it runs on (Options.ClockOf; none
// for a job on the real clock), and the queue is keyed by that merchant
// (jobs.merchant_id, empty for none): on Citus a merchant's jobs live on its
// shard, so enqueuing and running one stays on that shard. On PostgreSQL and
// Citus a worker first learns which merchants have due jobs, then claims and
// runs each merchant's in a transaction of its own (runAcross, a few
// merchants side by side), in that merchant's store lane
// (store.MerchantLane): its jobs are group-committed with its requests
// instead of taking turns with them on its balance rows (a batch of payout
// outcomes and new payouts on the same account), and on Citus, which cannot
// lock rows of a query across shards, each claim stays on one shard.
//
// # Kinds
//
// A kind is typed (NewKind[T]): its payload is a T. Register gives a kind its
// one handler, which gets the payload decoded (a second Register of a kind
// panics at start, as River's AddWorker does), and Enqueue is the one way to
// enqueue it, so a job cannot be enqueued with another kind's payload: that
// does not compile.
//
// # Why payd's own queue
//
// payd keeps its own small queue rather than River for two reasons: a job's
// run_at is read on its merchant's sandbox clock (Options.ClockOf), so moving
// a test clock makes work due; and a job commits in the same transaction as
// its effect, so it takes effect exactly once.
//
// # Keeping the queue small
//
// A job enqueued with a UniqueKey that a waiting job already holds writes
// nothing. Payins use it so that those expiring within the same minute of a
// merchant's clock share one expiry job (payin.expire_minute), which expires
// each at its own expired_at, to the millisecond: a create adds no job row
// when its minute has one.
//
// # Lanes and held jobs
//
// On PostgreSQL a job due now and enqueued with a Lane runs in that store lane
// right after its transaction commits (a receipt's clearing runs in its
// balance slot's lane), group-committed with the lane's work. Until then
// it is held (state held, which no worker of any process claims; its lane run
// finds it by a key drawn for it), so its id need not be read before the
// COMMIT. A held job whose run does not come, because its process stopped, is
// released to the workers after maxLaneHold (5 s).
package job
