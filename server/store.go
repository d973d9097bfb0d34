package server

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	_ "modernc.org/sqlite"           // database/sql driver "sqlite" (pure Go)
)

// Dialect names the SQL database behind a Store.
type Dialect string

// The supported stores.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// SQLiteFile is the database file a Store keeps under its data directory.
const SQLiteFile = "tracepriv.db"

// maxBatch bounds the jobs the SQLite writer commits together.
const maxBatch = 256

// ErrStoreClosed is returned by Update after Close.
var ErrStoreClosed = errors.New("store: closed")

// CommitError wraps a failure to commit: nothing of the transaction (and,
// on SQLite, of any job committed with it) was stored.
type CommitError struct{ Err error }

func (e *CommitError) Error() string {
	return "store: commit failed, nothing was stored: " + e.Err.Error()
}
func (e *CommitError) Unwrap() error { return e.Err }

// Store is the service's durable state: people, their budgets and the
// ledger of charges, in SQLite (a file under the data directory, WAL, the
// WAL fsynced after each group commit; see sqliteDSN) or PostgreSQL.
//
// Every write goes through Update, which runs a function in a transaction
// serialised per person and returns only after the transaction committed
// durably:
//
//   - SQLite has one writer. A single goroutine takes the queued jobs,
//     runs each in its own SAVEPOINT of one transaction (BEGIN IMMEDIATE)
//     and commits them together: one fsync for the batch (group commit).
//     A job that fails is rolled back to its savepoint alone; a failed
//     COMMIT fails every job of the batch. Jobs run one at a time, so
//     every job sees the committed state plus the jobs before it in its
//     batch, and a person's requests are serialised.
//   - PostgreSQL runs each job in its own transaction; the job locks its
//     person's row (SELECT ... FOR UPDATE) before reading anything, so a
//     person's requests are serialised by the database, across processes.
type Store struct {
	dialect Dialect
	db      *sql.DB // reads everywhere; every write on PostgreSQL
	wdb     *sql.DB // the SQLite writer, one connection

	// SQLite durability: the WAL file and the batches committed but not
	// yet fsynced (see walSyncer).
	walPath string
	wal     *os.File
	syncq   chan syncItem
	failed  atomic.Pointer[error]

	jobs      chan *job
	closeOnce sync.Once
	closed    chan struct{}
	done      chan struct{}
	mu        sync.RWMutex // guards sending on jobs against Close

	// observe, if set, is told each commit's duration and batch size.
	observe func(d time.Duration, jobs int, err error)
	// syncHook, if set (tests only), runs in place of the WAL fsync after
	// each batch's COMMIT: it lets a test hold a batch between its commit
	// and its fsync, or fail the fsync.
	syncHook func() error
}

// job is one Update queued for the SQLite writer.
type job struct {
	ctx    context.Context
	fn     func(*Tx) error
	result chan error
	hooks  []func()
}

// Tx is the transaction an Update function runs in. Queries use "?"
// placeholders in both dialects.
type Tx struct {
	tx      *sql.Tx
	dialect Dialect
	ctx     context.Context
	hooks   *[]func()
	stmts   *stmtCache // SQLite writer only
}

// stmtCache keeps the statements prepared in one SQLite batch: parsing a
// statement costs more than running it, and a batch runs the same few
// statements for every job. (database/sql cannot carry a statement
// prepared on a connection into a transaction without preparing it again,
// so the cache lives as long as the batch's transaction.)
type stmtCache struct {
	tx *sql.Tx
	m  map[string]*sql.Stmt
}

func (c *stmtCache) get(ctx context.Context, q string) (*sql.Stmt, error) {
	if st, ok := c.m[q]; ok {
		return st, nil
	}
	st, err := c.tx.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	c.m[q] = st
	return st, nil
}

// OnCommit registers f to run after the transaction committed (never if
// it is rolled back).
func (t *Tx) OnCommit(f func()) { *t.hooks = append(*t.hooks, f) }

// Dialect returns the store's dialect.
func (t *Tx) Dialect() Dialect { return t.dialect }

// stmt returns the prepared statement q (SQLite writer), or nil.
func (t *Tx) stmt(q string) (*sql.Stmt, error) {
	if t.stmts == nil {
		return nil, nil
	}
	return t.stmts.get(t.ctx, q)
}

// Exec runs a statement.
func (t *Tx) Exec(q string, args ...any) (sql.Result, error) {
	if st, err := t.stmt(q); err != nil || st != nil {
		if err != nil {
			return nil, err
		}
		return st.ExecContext(t.ctx, args...)
	}
	return t.tx.ExecContext(t.ctx, rebind(t.dialect, q), args...)
}

// QueryRow runs a query returning at most one row.
func (t *Tx) QueryRow(q string, args ...any) *sql.Row {
	if st, err := t.stmt(q); err == nil && st != nil {
		return st.QueryRowContext(t.ctx, args...)
	}
	return t.tx.QueryRowContext(t.ctx, rebind(t.dialect, q), args...)
}

// Query runs a query.
func (t *Tx) Query(q string, args ...any) (*sql.Rows, error) {
	if st, err := t.stmt(q); err != nil || st != nil {
		if err != nil {
			return nil, err
		}
		return st.QueryContext(t.ctx, args...)
	}
	return t.tx.QueryContext(t.ctx, rebind(t.dialect, q), args...)
}

// rebind turns "?" placeholders into PostgreSQL's "$n".
func rebind(d Dialect, q string) string {
	if d != Postgres || !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(q[i])
	}
	return b.String()
}

// OpenStore opens (creating if needed) the store and applies the schema
// migrations. url empty means SQLite in dataDir; "postgres://..." or
// "postgresql://..." means PostgreSQL (dataDir is then unused by the
// store).
func OpenStore(ctx context.Context, dataDir, url string) (*Store, error) {
	return openStore(ctx, dataDir, url, nil)
}

// openStore is OpenStore with the tests' syncHook.
func openStore(ctx context.Context, dataDir, url string, syncHook func() error) (*Store, error) {
	var s *Store
	switch {
	case url == "" || strings.HasPrefix(url, "sqlite:"):
		path := strings.TrimPrefix(url, "sqlite:")
		if path == "" {
			if dataDir == "" {
				return nil, errors.New("store: a data directory is needed for SQLite")
			}
			if err := os.MkdirAll(dataDir, 0o700); err != nil {
				return nil, fmt.Errorf("store: data directory: %w", err)
			}
			path = filepath.Join(dataDir, SQLiteFile)
		}
		var err error
		if s, err = openSQLite(path); err != nil {
			return nil, err
		}
	case strings.HasPrefix(url, "postgres://") || strings.HasPrefix(url, "postgresql://"):
		cfg, err := pgx.ParseConfig(url)
		if err != nil {
			return nil, fmt.Errorf("store: --db %s: %w", RedactURL(url), err)
		}
		// Every commit waits for its WAL record to be flushed, whatever the
		// server's default (see also the fsync check below).
		cfg.RuntimeParams["synchronous_commit"] = "on"
		db := stdlib.OpenDB(*cfg)
		db.SetMaxOpenConns(32)
		db.SetMaxIdleConns(32)
		db.SetConnMaxIdleTime(5 * time.Minute)
		s = &Store{dialect: Postgres, db: db}
	default:
		return nil, fmt.Errorf("store: --db %q: want postgres://... (or empty for SQLite under --data)", RedactURL(url))
	}
	s.closed = make(chan struct{})
	s.done = make(chan struct{})
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := s.db.PingContext(pctx); err != nil {
		s.closeDBs()
		return nil, fmt.Errorf("store: %s: %w", s.dialect, err)
	}
	if s.dialect == Postgres {
		var fsync string
		if err := s.db.QueryRowContext(pctx, "SHOW fsync").Scan(&fsync); err != nil {
			s.closeDBs()
			return nil, fmt.Errorf("store: postgres: %w", err)
		}
		if fsync != "on" {
			s.closeDBs()
			return nil, errors.New("store: postgres runs with fsync = off: its commits are not durable, and the ledger's guarantees need them to be")
		}
	}
	if err := migrate(pctx, s); err != nil {
		s.closeDBs()
		return nil, err
	}
	if s.dialect == SQLite {
		if err := s.syncWAL(); err != nil {
			s.closeDBs()
			return nil, fmt.Errorf("store: sqlite: %w", err)
		}
		s.syncHook = syncHook
		s.jobs = make(chan *job, 4*maxBatch)
		s.syncq = make(chan syncItem, 4*maxBatch)
		go s.writer()
		go s.checkpointer()
	} else {
		close(s.done)
	}
	return s, nil
}

// sqliteDSN is the connection string of the SQLite file: WAL journal,
// foreign keys on, a busy timeout for readers, and BEGIN IMMEDIATE for
// write transactions.
//
// Durability: synchronous=NORMAL, and the store fsyncs the WAL itself
// after each batch's COMMIT and before any answer of that batch is
// released (walSyncer). For every released answer this is the guarantee
// of synchronous=FULL (whose COMMIT fsyncs the WAL before returning): the
// frames of its transaction, and of every transaction before it, are on
// stable storage. The difference is where the fsync happens: outside the
// write lock, so the next batch runs while the previous one is being
// synced. WAL frames carry cumulative checksums, so recovery never keeps
// a later transaction without the earlier ones. Checkpoints with NORMAL
// sync the WAL before and the database after (SQLite's rule).
func sqliteDSN(path string) string {
	return "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)&_pragma=cache_size(-65536)&_pragma=mmap_size(268435456)&_txlock=immediate"
}

func openSQLite(path string) (*Store, error) {
	dsn := sqliteDSN(path)
	wdb, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: sqlite %s: %w", path, err)
	}
	wdb.SetMaxOpenConns(1)
	wdb.SetMaxIdleConns(1)
	wdb.SetConnMaxLifetime(0)
	wdb.SetConnMaxIdleTime(0)
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		wdb.Close()
		return nil, fmt.Errorf("store: sqlite %s: %w", path, err)
	}
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(8)
	// The file is created by the first connection; keep it private.
	if err := wdb.Ping(); err != nil {
		wdb.Close()
		db.Close()
		return nil, fmt.Errorf("store: sqlite %s: %w", path, err)
	}
	_ = os.Chmod(path, 0o600)
	var mode string
	if err := wdb.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		wdb.Close()
		db.Close()
		return nil, fmt.Errorf("store: sqlite %s: journal mode %q, want wal (%v)", path, mode, err)
	}
	return &Store{dialect: SQLite, db: db, wdb: wdb, walPath: path + "-wal"}, nil
}

// Dialect returns the store's dialect.
func (s *Store) Dialect() Dialect { return s.dialect }

// DB returns the read pool (for checks and tests).
func (s *Store) DB() *sql.DB { return s.db }

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

// Close stops accepting work, lets the SQLite writer finish what is
// queued, and closes the databases.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		close(s.closed)
		if s.jobs != nil {
			close(s.jobs)
		}
		s.mu.Unlock()
	})
	<-s.done
	return s.closeDBs()
}

func (s *Store) closeDBs() error {
	var err error
	if s.wal != nil {
		s.wal.Close()
	}
	if s.wdb != nil {
		err = s.wdb.Close()
	}
	if e := s.db.Close(); err == nil {
		err = e
	}
	return err
}

// Update runs fn in a write transaction serialised per person (see Store)
// and returns after the transaction committed, with fn's error if fn
// failed (its writes then rolled back) or a *CommitError if the commit
// failed. Hooks registered with Tx.OnCommit run after a successful commit,
// before Update returns. Once fn has started, it runs to completion even
// if ctx is cancelled: a request either commits entirely or not at all.
func (s *Store) Update(ctx context.Context, fn func(*Tx) error) error {
	if s.dialect == Postgres {
		return s.updatePostgres(ctx, fn)
	}
	if e := s.failed.Load(); e != nil {
		return &CommitError{*e}
	}
	j := &job{ctx: ctx, fn: fn, result: make(chan error, 1)}
	s.mu.RLock()
	select {
	case <-s.closed:
		s.mu.RUnlock()
		return ErrStoreClosed
	default:
	}
	select {
	case s.jobs <- j:
	case <-ctx.Done():
		s.mu.RUnlock()
		return ctx.Err()
	}
	s.mu.RUnlock()
	err := <-j.result
	if err == nil {
		for _, h := range j.hooks {
			h()
		}
	}
	return err
}

func (s *Store) updatePostgres(ctx context.Context, fn func(*Tx) error) error {
	select {
	case <-s.closed:
		return ErrStoreClosed
	default:
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// Detached from the request: once started, a job commits or rolls
	// back on its own terms, not because a client went away.
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	start := time.Now()
	tx, err := s.db.BeginTx(tctx, nil)
	if err != nil {
		return &CommitError{err}
	}
	var hooks []func()
	if err := callJob(fn, &Tx{tx: tx, dialect: Postgres, ctx: tctx, hooks: &hooks}); err != nil {
		tx.Rollback()
		return err
	}
	err = tx.Commit()
	if s.observe != nil {
		s.observe(time.Since(start), 1, err)
	}
	if err != nil {
		return &CommitError{err}
	}
	for _, h := range hooks {
		h()
	}
	return nil
}

// writer is the SQLite writer goroutine. It runs jobs one at a time, each
// in its own savepoint of an open transaction (BEGIN IMMEDIATE), and
// commits the transaction as soon as the WAL syncer is free (or the batch
// is full); the syncer then fsyncs the WAL and reports to the batch's jobs
// while the writer already runs the next batch. So at most one batch is
// committed but not yet durable, its answers wait for the fsync, and the
// fsync of one batch overlaps the work of the next: the busier the
// server, the larger the batches and the fewer the fsyncs per answer.
func (s *Store) writer() {
	idle := make(chan struct{}, 1) // a token: the syncer is free
	idle <- struct{}{}
	synced := make(chan struct{})
	go func() {
		s.walSyncer(idle)
		close(synced)
	}()
	defer func() {
		close(s.syncq)
		<-synced
		close(s.done)
	}()
	var b *openBatch
	jobs := s.jobs
	for jobs != nil || b != nil {
		if b == nil {
			j, ok := <-jobs
			if !ok {
				return
			}
			b = s.begin()
			b.run(j)
			continue
		}
		if len(b.jobs) >= maxBatch {
			<-idle
			s.commit(b)
			b = nil
			continue
		}
		// Commit when the syncer is free; meanwhile take more jobs. The
		// token is checked first so that a free syncer is never kept
		// waiting by a stream of jobs.
		select {
		case <-idle:
			s.commit(b)
			b = nil
			continue
		default:
		}
		select {
		case <-idle:
			s.commit(b)
			b = nil
		case j, ok := <-jobs:
			if !ok {
				jobs = nil
				<-idle
				s.commit(b)
				b = nil
				continue
			}
			b.run(j)
		}
	}
}

// openBatch is the writer's open transaction and the jobs run in it.
type openBatch struct {
	s     *Store
	start time.Time
	tx    *sql.Tx
	wtx   *Tx
	err   error // the transaction is broken: every job fails
	jobs  []*job
	errs  []error
}

func (s *Store) begin() *openBatch {
	b := &openBatch{s: s, start: time.Now()}
	ctx := context.Background()
	b.tx, b.err = s.wdb.BeginTx(ctx, nil)
	if b.err == nil {
		b.wtx = &Tx{tx: b.tx, dialect: SQLite, ctx: ctx, stmts: &stmtCache{tx: b.tx, m: map[string]*sql.Stmt{}}}
	}
	return b
}

// run runs one job in its own savepoint: a job that fails is rolled back
// alone.
func (b *openBatch) run(j *job) {
	b.jobs = append(b.jobs, j)
	b.errs = append(b.errs, nil)
	i := len(b.jobs) - 1
	if b.err != nil {
		return
	}
	if err := j.ctx.Err(); err != nil {
		b.errs[i] = err // gone before it started: it never ran
		return
	}
	exec := func(q string) error { _, err := b.wtx.Exec(q); return err }
	if b.err = exec("SAVEPOINT job"); b.err != nil {
		return
	}
	var hooks []func()
	b.wtx.hooks = &hooks
	ferr := callJob(j.fn, b.wtx)
	if ferr != nil {
		if b.err = exec("ROLLBACK TO job"); b.err != nil {
			return
		}
	} else {
		j.hooks = hooks
	}
	if b.err = exec("RELEASE job"); b.err != nil {
		return
	}
	b.errs[i] = ferr
}

// callJob runs fn, turning a panic into an error, so that the job is
// rolled back like any failed one: on SQLite fn runs on the writer
// goroutine, where a panic would stop every later write; on PostgreSQL a
// transaction left open would keep its person's row locked.
func callJob(fn func(*Tx) error, tx *Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("store: job panicked: %v", p)
		}
	}()
	return fn(tx)
}

// commit commits the batch and hands it to the syncer (whose token the
// caller holds).
func (s *Store) commit(b *openBatch) {
	if b.err == nil {
		b.err = b.tx.Commit()
	} else if b.tx != nil {
		b.tx.Rollback()
	}
	s.syncq <- syncItem{batch: b.jobs, errs: b.errs, start: b.start, err: b.err}
}

// checkpointer copies the WAL into the database in the background
// (PRAGMA wal_checkpoint(PASSIVE), on a reader connection, never blocking
// the writer), so that the writer's own automatic checkpoint, which it
// runs at COMMIT when the WAL passes 1,000 pages and which also lets the
// WAL restart from its beginning, finds little left to copy.
func (s *Store) checkpointer() {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-s.closed:
			return
		case <-t.C:
			var busy, log, done int
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			s.db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &log, &done)
			cancel()
		}
	}
}

// syncItem is a committed batch waiting for the WAL fsync (or a batch
// whose transaction failed: err, nothing of it stored).
type syncItem struct {
	batch []*job
	errs  []error
	start time.Time
	err   error
}

// walSyncer fsyncs the WAL for each committed batch and only then reports
// to its jobs, which release their answers; then it hands the token back.
// If an fsync fails, the batch's durability is unknown: its jobs fail
// (503, nothing released) and the store refuses every later write; their
// charges may persist without an answer (over-counting, never
// under-counting). A restart is needed.
func (s *Store) walSyncer(idle chan<- struct{}) {
	for it := range s.syncq {
		err := it.err
		if err == nil {
			sync := s.syncWAL
			if s.syncHook != nil {
				sync = s.syncHook
			}
			if err = sync(); err != nil {
				err = fmt.Errorf("fsync of the WAL failed: %w", err)
				s.failed.CompareAndSwap(nil, &err)
			}
		}
		if e := s.failed.Load(); e != nil && err == nil {
			err = *e
		}
		for i, j := range it.batch {
			if err != nil {
				j.result <- &CommitError{err}
			} else {
				j.result <- it.errs[i]
			}
		}
		if s.observe != nil {
			s.observe(time.Since(it.start), len(it.batch), err)
		}
		idle <- struct{}{}
	}
}

// syncWAL fsyncs the SQLite WAL file (and, when it is first opened or was
// replaced, its directory, so that the file's name is durable too).
func (s *Store) syncWAL() error {
	if s.wal != nil {
		st, err1 := s.wal.Stat()
		cur, err2 := os.Stat(s.walPath)
		if err1 != nil || err2 != nil || !os.SameFile(st, cur) {
			s.wal.Close()
			s.wal = nil
		}
	}
	if s.wal == nil {
		f, err := os.OpenFile(s.walPath, os.O_RDWR, 0)
		if errors.Is(err, os.ErrNotExist) {
			return nil // nothing written yet
		}
		if err != nil {
			return err
		}
		if err := syncDir(filepath.Dir(s.walPath)); err != nil {
			f.Close()
			return err
		}
		s.wal = f
	}
	return s.wal.Sync()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// View runs fn against the read pool.
func (s *Store) View(ctx context.Context, fn func(q Querier) error) error {
	return fn(querier{s.db, s.dialect, ctx})
}

// Querier runs read-only queries with "?" placeholders.
type Querier interface {
	QueryRow(q string, args ...any) *sql.Row
	Query(q string, args ...any) (*sql.Rows, error)
}

// querier is a Querier over the read pool or a read transaction.
type querier struct {
	q interface {
		QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
		QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	}
	d   Dialect
	ctx context.Context
}

func (q querier) QueryRow(s string, args ...any) *sql.Row {
	return q.q.QueryRowContext(q.ctx, rebind(q.d, s), args...)
}

func (q querier) Query(s string, args ...any) (*sql.Rows, error) {
	return q.q.QueryContext(q.ctx, rebind(q.d, s), args...)
}

// RedactURL hides the password of a database URL, for messages and logs.
func RedactURL(u string) string {
	at := strings.Index(u, "@")
	scheme := strings.Index(u, "://")
	if at < 0 || scheme < 0 || at < scheme {
		return u
	}
	cred := u[scheme+3 : at]
	if c := strings.Index(cred, ":"); c >= 0 {
		return u[:scheme+3] + cred[:c] + ":xxxxx" + u[at:]
	}
	return u
}

// IntegrityCheck runs the database's own consistency check: SQLite's
// PRAGMA integrity_check; on PostgreSQL, amcheck's bt_index_check on the
// service's indexes when the extension is installed (skipped, and said
// so, otherwise). It returns what was checked.
func (s *Store) IntegrityCheck(ctx context.Context) (string, error) {
	if s.dialect == SQLite {
		rows, err := s.db.QueryContext(ctx, "PRAGMA integrity_check")
		if err != nil {
			return "", err
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				return "", err
			}
			out = append(out, line)
		}
		if err := rows.Err(); err != nil {
			return "", err
		}
		if len(out) != 1 || out[0] != "ok" {
			return "", fmt.Errorf("sqlite integrity_check: %s", strings.Join(out, "; "))
		}
		return "sqlite integrity_check: ok", nil
	}
	// The check only reads: amcheck is used where an administrator (or the
	// test setup) installed it.
	var amcheck bool
	if err := s.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'amcheck')`).Scan(&amcheck); err != nil {
		return "", err
	}
	if !amcheck {
		return "postgres: the amcheck extension is not installed, index check skipped", nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		JOIN pg_class t ON t.oid = i.indrelid JOIN pg_am a ON a.oid = c.relam
		WHERE t.relname IN ('people', 'charges', 'schema_migrations') AND a.amname = 'btree'`)
	if err != nil {
		return "", err
	}
	var idx []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return "", err
		}
		idx = append(idx, n)
	}
	rows.Close()
	for _, n := range idx {
		if _, err := s.db.ExecContext(ctx, "SELECT bt_index_check($1::regclass, true)", n); err != nil {
			return "", fmt.Errorf("postgres bt_index_check %s: %w", n, err)
		}
	}
	return fmt.Sprintf("postgres bt_index_check (heapallindexed) on %d indexes: ok", len(idx)), nil
}

// Snapshot runs fn in a read-only transaction: every query sees the same
// committed state (SQLite's deferred read transaction in WAL mode;
// PostgreSQL's REPEATABLE READ).
func (s *Store) Snapshot(ctx context.Context, fn func(q Querier) error) error {
	opts := &sql.TxOptions{ReadOnly: true}
	if s.dialect == Postgres {
		opts.Isolation = sql.LevelRepeatableRead
	}
	tx, err := s.db.BeginTx(ctx, opts)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return fn(querier{tx, s.dialect, ctx})
}
