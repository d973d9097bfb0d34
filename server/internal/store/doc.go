// Package store is the durable state of the tracepriv service in SQL
// tables: people, their budget accounts and the ledger of their charges
// (what package budget keeps in a file), with the transactions that decide
// and record a charge and the schema migrations, in SQLite (a file under a
// data directory) or PostgreSQL. It knows nothing of HTTP: package server
// maps its errors to statuses.
//
// # Durability
//
// Every write runs in Store.Update, serialised per person, and returns
// only once its commit is durable. Every read whose result is released
// (Store.Read) waits, after reading, until every commit of that person it
// could have seen is durable too. So nothing read from the store leaves
// the service before the charge behind it is on stable storage, whichever
// path it takes: a fresh answer, a replay of a stored answer, or the
// ledger.
//
//   - SQLite has one writer, which runs queued jobs in savepoints of one
//     transaction, commits them together and hands the batch to a syncer
//     that fsyncs the WAL (group commit). A commit is durable once that
//     fsync returned. If an fsync fails, the store releases nothing more:
//     every later write and every releasing read fails with ErrUnhealthy
//     until the process is restarted (after a failed fsync the kernel's
//     page cache no longer says what is on the disk).
//   - PostgreSQL runs each job in its own transaction, which locks its
//     person's row first. With fsync and synchronous_commit on (checked
//     when the store opens) PostgreSQL makes a commit visible only after
//     its WAL record is flushed, and stops itself on a failed fsync; a
//     commit is durable once COMMIT returned. A COMMIT that fails has an
//     unknown outcome (ErrNotDurable): the request and every read that
//     waited for it fail; what PostgreSQL shows afterwards is durable.
//
// Between a commit and its confirmation (the fsync, or COMMIT's return)
// the commit is pending: readers of its person wait for it (Waiting counts
// them), and fail with ErrNotDurable if it fails.
package store
