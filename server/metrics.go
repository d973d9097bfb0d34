package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tracepriv/tracepriv/server/internal/store"
)

// metrics are the Prometheus metrics of one server, on their own registry.
// No label carries a person id, a token or a location.
type metrics struct {
	dialect      string // the store's, set once it is open
	reg          *prometheus.Registry
	requests     *prometheus.CounterVec
	latency      *prometheus.HistogramVec
	charges      *prometheus.CounterVec
	charged      *prometheus.CounterVec
	exhausted    *prometheus.CounterVec
	replays      prometheus.Counter
	rateLimited  prometheus.Counter
	authFailures prometheus.Counter
	people       prometheus.Counter
	commit       *prometheus.HistogramVec
	batch        prometheus.Histogram
	commitErrors prometheus.Counter
	handler      http.Handler
}

func newMetrics(s *Server) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tracepriv_http_requests_total", Help: "HTTP requests by route pattern, method and status code.",
	}, []string{"route", "method", "code"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "tracepriv_http_request_duration_seconds", Help: "HTTP request latency by route pattern.",
		Buckets: []float64{.0005, .001, .002, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	}, []string{"route"})
	m.charges = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tracepriv_charges_total", Help: "Committed ledger charges (released answers) by kind (geoind, cip).",
	}, []string{"kind"})
	m.charged = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tracepriv_epsilon_charged_total", Help: "Sum of committed charges by kind, in each kind's unit.",
	}, []string{"kind"})
	m.exhausted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tracepriv_budget_exhausted_total", Help: "Requests refused because the budget could not pay, by kind.",
	}, []string{"kind"})
	m.replays = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "tracepriv_idempotent_replays_total", Help: "Retried requests answered from the ledger.",
	})
	m.rateLimited = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "tracepriv_rate_limited_total", Help: "Requests refused by the per-token rate limit.",
	})
	m.authFailures = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "tracepriv_auth_failures_total", Help: "Requests with a missing or wrong token.",
	})
	m.people = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "tracepriv_people_created_total", Help: "People created by this process.",
	})
	m.commit = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "tracepriv_store_commit_seconds", Help: "Duration of store transactions, from begin to durable commit.",
		Buckets: []float64{.0002, .0005, .001, .002, .005, .01, .025, .05, .1, .25, 1},
	}, []string{"store"})
	m.batch = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "tracepriv_store_batch_jobs", Help: "Jobs committed together by the SQLite writer (group commit).",
		Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256},
	})
	m.commitErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "tracepriv_store_commit_errors_total", Help: "Store transactions whose commit failed (nothing stored).",
	})
	waiting := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "tracepriv_store_waiting_answers", Help: "Answers held back until a commit they depend on is confirmed durable.",
	}, func() float64 {
		if s.store == nil {
			return 0
		}
		return float64(s.store.Waiting())
	})
	m.handler = promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
	m.reg.MustRegister(m.requests, m.latency, m.charges, m.charged, m.exhausted, m.replays, m.rateLimited,
		m.authFailures, m.people, m.commit, m.batch, m.commitErrors, waiting,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// handleMetrics serves the Prometheus metrics to the admin token (what
// the service charged, refused and failed is not for everyone), or to
// anyone with Options.PublicMetrics.
func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	if !s.opt.PublicMetrics {
		if err := s.requireAdmin(r); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	s.metrics.handler.ServeHTTP(w, r)
}

func (m *metrics) observeRequest(route, method string, status int, d time.Duration) {
	m.requests.WithLabelValues(route, method, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(route).Observe(d.Seconds())
}

// observeCommit is the store's hook.
func (m *metrics) observeCommit(dur time.Duration, jobs int, err error) {
	if err != nil {
		m.commitErrors.Inc()
	}
	if m.dialect == string(store.SQLite) {
		m.batch.Observe(float64(jobs))
	}
	m.commit.WithLabelValues(m.dialect).Observe(dur.Seconds())
}
