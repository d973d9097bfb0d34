package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

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

// Options are the store's optional settings.
type Options struct {
	// AfterCommit, if set, runs after each commit and before the commit
	// is confirmed durable (SQLite: before the WAL fsync; PostgreSQL:
	// after COMMIT returned). An error counts as a failed fsync. Tests use
	// it to hold a commit between COMMIT and its confirmation, or to fail
	// it.
	AfterCommit func() error
	// Observe, if set, is told each commit's duration, batch size and
	// outcome.
	Observe func(d time.Duration, jobs int, err error)
	// Account opens the account of a person of schema 1 when migration 2
	// runs, from their stored configuration and the two budgets schema 1
	// kept (AccountTerms). Needed only to migrate a database that holds
	// people.
	Account func(config string, geoBudget, cipBudget float64) (AccountTerms, error)

	// maxVersion, if set, stops the migrations at that version (tests of
	// a migration build the database it starts from).
	maxVersion int
	// checkpointEvery, if set, replaces the checkpointer's 100 ms period;
	// onCheckpoint, if set, runs after each of its checkpoints (tests).
	checkpointEvery time.Duration
	onCheckpoint    func()
}

// Store is the service's durable state (see the package comment).
type Store struct {
	dialect  Dialect
	location string  // the SQLite file, or the redacted PostgreSQL URL
	db       *sql.DB // reads everywhere; every write on PostgreSQL
	wdb      *sql.DB // the SQLite writer, one connection
	opt      Options
	person   *sql.Stmt // Lookup's statement
	cred     *sql.Stmt // Credential's statement

	// SQLite durability: the WAL file, the batches committed but not yet
	// fsynced, and the first fsync failure (sticky).
	walPath string
	wal     *os.File
	syncq   chan syncItem
	failed  atomic.Pointer[error]

	pending barrier
	waiting atomic.Int64

	jobs      chan *job
	closeOnce sync.Once
	closeErr  error
	closed    chan struct{}
	done      chan struct{}
	ckptDone  chan struct{} // closed when the checkpointer has returned
	mu        sync.RWMutex  // guards sending on jobs against Close
}

// Open opens (creating if needed) the store and applies the schema
// migrations. url empty means SQLite in dataDir; "postgres://..." or
// "postgresql://..." means PostgreSQL (dataDir is then unused).
func Open(ctx context.Context, dataDir, url string, opt Options) (*Store, error) {
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
		s = &Store{dialect: Postgres, db: db, location: RedactURL(url)}
	default:
		return nil, fmt.Errorf("store: --db %q: want postgres://... (or empty for SQLite under --data)", RedactURL(url))
	}
	s.opt = opt
	s.pending.m = map[string][]*pendingCommit{}
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
	var err error
	if s.opt.maxVersion != 0 {
		// An old schema, for a migration's test: only raw SQL runs on it.
		s.person, err = s.db.PrepareContext(pctx, "SELECT 1")
	} else {
		s.person, err = s.db.PrepareContext(pctx, rebind(s.dialect, lookupQuery))
	}
	if err != nil {
		s.closeDBs()
		return nil, fmt.Errorf("store: %w", err)
	}
	credQuery := rebind(s.dialect, credentialQuery)
	if s.opt.maxVersion != 0 {
		credQuery = "SELECT 1" // an old schema may have no credentials table
	}
	if s.cred, err = s.db.PrepareContext(pctx, credQuery); err != nil {
		s.closeDBs()
		return nil, fmt.Errorf("store: %w", err)
	}
	if s.dialect == SQLite {
		if err := s.syncWAL(); err != nil {
			s.closeDBs()
			return nil, fmt.Errorf("store: sqlite: %w", err)
		}
		s.jobs = make(chan *job, 4*maxBatch)
		s.syncq = make(chan syncItem, 4*maxBatch)
		s.ckptDone = make(chan struct{})
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
	return &Store{dialect: SQLite, db: db, wdb: wdb, walPath: path + "-wal", location: path}, nil
}

// Dialect returns the store's dialect.
func (s *Store) Dialect() Dialect { return s.dialect }

// Location is where the store is: the SQLite file, or the PostgreSQL URL
// without its password.
func (s *Store) Location() string { return s.location }

// Health reports whether the store can release answers: the database
// answers and no commit has failed to become durable (SQLite).
func (s *Store) Health(ctx context.Context) error {
	if e := s.failed.Load(); e != nil {
		return wrap(ErrUnhealthy, *e)
	}
	if err := s.db.PingContext(ctx); err != nil {
		return wrap(ErrUnavailable, err)
	}
	return nil
}

// Waiting returns how many answers are held back, waiting for a commit to
// be confirmed durable.
func (s *Store) Waiting() int { return int(s.waiting.Load()) }

// Close stops accepting work, lets the SQLite writer finish what is
// queued, and closes the databases.
// Close may be called more than once.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		close(s.closed)
		if s.jobs != nil {
			close(s.jobs)
		}
		s.mu.Unlock()
		<-s.done
		if s.ckptDone != nil {
			// A checkpoint still running holds a connection that would
			// outlive Close: database/sql closes a busy connection when it
			// is returned, after DB.Close, and SQLite may then still touch
			// the WAL and shared-memory files of a data directory its
			// owner is already removing.
			<-s.ckptDone
		}
		s.closeErr = s.closeDBs()
	})
	return s.closeErr
}

func (s *Store) closeDBs() error {
	var err error
	if s.person != nil {
		s.person.Close()
	}
	if s.cred != nil {
		s.cred.Close()
	}
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

// pendingCommit is a commit not yet confirmed durable.
type pendingCommit struct {
	done chan struct{}
	err  error // set before done is closed
}

// barrier keeps each person's pending commits. A commit is added before
// its COMMIT is sent and resolved once it is durable (or failed), so a
// reader who saw its effects finds it here, or finds it resolved.
type barrier struct {
	mu sync.Mutex
	m  map[string][]*pendingCommit
}

func (b *barrier) add(people []string) *pendingCommit {
	pc := &pendingCommit{done: make(chan struct{})}
	b.mu.Lock()
	for _, p := range people {
		b.m[p] = append(b.m[p], pc)
	}
	b.mu.Unlock()
	return pc
}

func (b *barrier) resolve(people []string, pc *pendingCommit, err error) {
	pc.err = err
	close(pc.done)
	b.mu.Lock()
	for _, p := range people {
		l := slices.DeleteFunc(b.m[p], func(x *pendingCommit) bool { return x == pc })
		if len(l) == 0 {
			delete(b.m, p)
		} else {
			b.m[p] = l
		}
	}
	b.mu.Unlock()
}

// waitDurable returns once every commit of person pending now (but self)
// is durable, with ErrNotDurable if one failed, and then checks that the
// store is healthy: if not, it fails with ErrNotDurable after a commit of
// the caller's own (self), ErrUnhealthy after a read.
func (s *Store) waitDurable(ctx context.Context, person string, self *pendingCommit) error {
	s.pending.mu.Lock()
	list := slices.Clone(s.pending.m[person])
	s.pending.mu.Unlock()
	for _, pc := range list {
		if pc == self {
			continue
		}
		select {
		case <-pc.done:
		default:
			s.waiting.Add(1)
			select {
			case <-pc.done:
			case <-ctx.Done():
			}
			s.waiting.Add(-1)
			if err := ctx.Err(); err != nil {
				return wrap(ErrNotDurable, err)
			}
		}
		if pc.err != nil {
			return wrap(ErrNotDurable, pc.err)
		}
	}
	if e := s.failed.Load(); e != nil {
		if self != nil {
			return wrap(ErrNotDurable, *e)
		}
		return wrap(ErrUnhealthy, *e)
	}
	return nil
}

// job is one Update queued for the SQLite writer.
type job struct {
	ctx    context.Context
	person string
	fn     func(*Tx) error
	result chan error
	hooks  []func()
	pc     *pendingCommit // the batch's commit
}

// Update runs fn in a write transaction serialised per person (the
// person whose data fn reads and writes) and returns once the transaction
// committed durably and every earlier commit of the person is durable too:
// fn's error if fn failed (its writes then rolled back; a panic is an
// error), ErrNotRun if ctx ended before fn ran, ErrNotDurable if the
// commit could not be confirmed durable, ErrUnhealthy or ErrUnavailable if
// the store could not run it. Hooks registered with Tx.OnCommit run after
// the commit is durable. Once fn has started it runs to completion even
// if ctx ends: a request is stored entirely or not at all.
func (s *Store) Update(ctx context.Context, person string, fn func(*Tx) error) error {
	if s.dialect == Postgres {
		return s.updatePostgres(ctx, person, fn)
	}
	if e := s.failed.Load(); e != nil {
		return wrap(ErrUnhealthy, *e)
	}
	j := &job{ctx: ctx, person: person, fn: fn, result: make(chan error, 1)}
	s.mu.RLock()
	select {
	case <-s.closed:
		s.mu.RUnlock()
		return ErrUnavailable
	default:
	}
	select {
	case s.jobs <- j:
	case <-ctx.Done():
		s.mu.RUnlock()
		return wrap(ErrNotRun, ctx.Err())
	}
	s.mu.RUnlock()
	if err := <-j.result; err != nil {
		return err
	}
	for _, h := range j.hooks {
		h()
	}
	return s.waitDurable(ctx, person, j.pc)
}

func (s *Store) updatePostgres(ctx context.Context, person string, fn func(*Tx) error) error {
	select {
	case <-s.closed:
		return ErrUnavailable
	default:
	}
	if err := ctx.Err(); err != nil {
		return wrap(ErrNotRun, err)
	}
	// Detached from the request: once started, a job commits or rolls
	// back on its own terms, not because a client went away.
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	start := time.Now()
	tx, err := s.db.BeginTx(tctx, nil)
	if err != nil {
		return wrap(ErrUnavailable, err)
	}
	var hooks []func()
	if err := callJob(fn, &Tx{tx: tx, dialect: Postgres, ctx: tctx, hooks: &hooks}); err != nil {
		tx.Rollback()
		return err
	}
	people := []string{person}
	pc := s.pending.add(people)
	err = tx.Commit()
	if err == nil && s.opt.AfterCommit != nil {
		err = s.opt.AfterCommit()
	}
	s.pending.resolve(people, pc, err)
	if s.opt.Observe != nil {
		s.opt.Observe(time.Since(start), 1, err)
	}
	if err != nil {
		return wrap(ErrNotDurable, err)
	}
	for _, h := range hooks {
		h()
	}
	return s.waitDurable(ctx, person, pc)
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
	ran   int // jobs that ran and wait for the batch's fsync
}

func (s *Store) begin() *openBatch {
	b := &openBatch{s: s, start: time.Now()}
	ctx := context.Background()
	b.tx, b.err = s.wdb.BeginTx(ctx, nil)
	if b.err == nil {
		b.wtx = &Tx{tx: b.tx, dialect: SQLite, ctx: ctx, stmts: &stmtCache{tx: b.tx, m: map[string]*sql.Stmt{}}}
	} else {
		b.err = wrap(ErrUnavailable, b.err)
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
		b.errs[i] = wrap(ErrNotRun, err) // gone before it started: it never ran
		return
	}
	exec := func(q string) error { _, err := b.wtx.exec(q); return err }
	if err := exec("SAVEPOINT job"); err != nil {
		b.err = wrap(ErrUnavailable, err)
		return
	}
	var hooks []func()
	b.wtx.hooks = &hooks
	ferr := callJob(j.fn, b.wtx)
	if ferr != nil {
		if err := exec("ROLLBACK TO job"); err != nil {
			b.err = wrap(ErrUnavailable, err)
			return
		}
	} else {
		j.hooks = hooks
	}
	if err := exec("RELEASE job"); err != nil {
		b.err = wrap(ErrUnavailable, err)
		return
	}
	b.errs[i] = ferr
	b.ran++
	b.s.waiting.Add(1)
}

// commit commits the batch and hands it to the syncer (whose token the
// caller holds). The batch's commit is pending from before COMMIT until
// the syncer confirms it.
func (s *Store) commit(b *openBatch) {
	people := make([]string, 0, len(b.jobs))
	for _, j := range b.jobs {
		people = append(people, j.person)
	}
	slices.Sort(people)
	people = slices.Compact(people)
	pc := s.pending.add(people)
	for _, j := range b.jobs {
		j.pc = pc
	}
	if b.err == nil {
		if err := b.tx.Commit(); err != nil {
			// SQLite rolls a failed COMMIT back, but whether any of it
			// reached the WAL is not something to promise.
			b.err = wrap(ErrNotDurable, err)
		}
	} else if b.tx != nil {
		b.tx.Rollback()
	}
	s.syncq <- syncItem{batch: b.jobs, errs: b.errs, start: b.start, err: b.err, pc: pc, people: people, ran: b.ran}
}

// checkpointer copies the WAL into the database in the background
// (PRAGMA wal_checkpoint(PASSIVE), on a reader connection, never blocking
// the writer), so that the writer's own automatic checkpoint, which it
// runs at COMMIT when the WAL passes 1,000 pages and which also lets the
// WAL restart from its beginning, finds little left to copy.
func (s *Store) checkpointer() {
	defer close(s.ckptDone)
	every := 100 * time.Millisecond
	if s.opt.checkpointEvery > 0 {
		every = s.opt.checkpointEvery
	}
	t := time.NewTicker(every)
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
			if s.opt.onCheckpoint != nil {
				s.opt.onCheckpoint()
			}
		}
	}
}

// syncItem is a committed batch waiting for the WAL fsync (or a batch
// whose transaction failed: err).
type syncItem struct {
	batch  []*job
	errs   []error
	start  time.Time
	err    error
	pc     *pendingCommit
	people []string
	ran    int
}

// walSyncer fsyncs the WAL for each committed batch, resolves the batch's
// pending commit, and only then reports to its jobs, which release their
// answers; then it hands the token back. If an fsync fails, the batch's
// durability is unknown: its jobs fail (ErrNotDurable, nothing released;
// their charges may persist without an answer: over-counting, never
// under-counting) and the store releases nothing more until it is
// restarted.
func (s *Store) walSyncer(idle chan<- struct{}) {
	for it := range s.syncq {
		err := it.err
		if err == nil {
			if s.opt.AfterCommit != nil {
				err = s.opt.AfterCommit()
			}
			if err == nil {
				err = s.syncWAL()
			}
			if err != nil {
				// A variable of its own: s.failed keeps a pointer to it,
				// which other goroutines read.
				failure := wrap(ErrNotDurable, fmt.Errorf("fsync of the WAL failed: %w", err))
				s.failed.CompareAndSwap(nil, &failure)
				err = failure
			}
		}
		if e := s.failed.Load(); e != nil && err == nil {
			// An earlier batch failed: this one committed, but the store no
			// longer vouches for anything.
			err = wrap(ErrNotDurable, *e)
		}
		s.pending.resolve(it.people, it.pc, err)
		s.waiting.Add(int64(-it.ran))
		for i, j := range it.batch {
			if err != nil {
				j.result <- err
			} else {
				j.result <- it.errs[i]
			}
		}
		if s.opt.Observe != nil {
			s.opt.Observe(time.Since(it.start), len(it.batch), err)
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

// Read runs fn in a read-only snapshot (every query sees the same
// committed state: SQLite's deferred read transaction in WAL mode,
// PostgreSQL's REPEATABLE READ) and returns once every commit of person
// that fn could have seen is durable: what fn read may then be released.
// It fails with ErrNotDurable if such a commit failed and ErrUnhealthy if
// the store is unhealthy.
func (s *Store) Read(ctx context.Context, person string, fn func(*View) error) error {
	if e := s.failed.Load(); e != nil {
		return wrap(ErrUnhealthy, *e)
	}
	if err := s.snapshot(ctx, fn); err != nil {
		return err
	}
	return s.waitDurable(ctx, person, nil)
}

// Scan runs fn in a read-only snapshot like Read, without waiting for
// durability: for checks and tests, never for what is released.
func (s *Store) Scan(ctx context.Context, fn func(*View) error) error {
	return s.snapshot(ctx, fn)
}

func (s *Store) snapshot(ctx context.Context, fn func(*View) error) error {
	opts := &sql.TxOptions{ReadOnly: true}
	if s.dialect == Postgres {
		opts.Isolation = sql.LevelRepeatableRead
	}
	tx, err := s.db.BeginTx(ctx, opts)
	if err != nil {
		if ctx.Err() != nil {
			return wrap(ErrNotRun, err)
		}
		return wrap(ErrUnavailable, err)
	}
	defer tx.Rollback()
	return fn(&View{q: querier{tx, s.dialect, ctx}})
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
