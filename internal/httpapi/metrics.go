package httpapi

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics are the process's Prometheus metrics, on a registry of their own so
// that several servers can live in one test process.
type Metrics struct {
	Registry *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	jobs     *prometheus.CounterVec
	jobTime  *prometheus.HistogramVec
	webhooks *prometheus.CounterVec
	hookLag  prometheus.Histogram
}

// NewMetrics registers payd's metrics and the Go and process collectors
// (CPU, memory, file descriptors).
func NewMetrics() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payd_http_requests_total", Help: "HTTP requests by route and status code.",
		}, []string{"route", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "payd_http_request_duration_seconds", Help: "HTTP request latency by route.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"route"}),
		jobs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payd_jobs_total", Help: "Job runs by kind and outcome (done, retry, failed).",
		}, []string{"kind", "outcome"}),
		jobTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "payd_job_duration_seconds", Help: "Job run time by kind.",
			Buckets: prometheus.DefBuckets,
		}, []string{"kind"}),
		webhooks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payd_webhook_attempts_total", Help: "Webhook delivery attempts by outcome (delivered, retry, failed).",
		}, []string{"outcome"}),
		hookLag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "payd_webhook_attempt_duration_seconds", Help: "Time a receiver took to answer a webhook delivery.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 15},
		}),
	}
	m.Registry.MustRegister(m.requests, m.latency, m.jobs, m.jobTime, m.webhooks, m.hookLag,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *Metrics) observeRequest(route string, status int, took time.Duration) {
	m.requests.WithLabelValues(route, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(route).Observe(took.Seconds())
}

// ObserveJob is a job.Observer.
func (m *Metrics) ObserveJob(kind, outcome string, took time.Duration) {
	m.jobs.WithLabelValues(kind, outcome).Inc()
	m.jobTime.WithLabelValues(kind).Observe(took.Seconds())
}

// ObserveWebhook records one delivery attempt.
func (m *Metrics) ObserveWebhook(outcome string, latency time.Duration) {
	m.webhooks.WithLabelValues(outcome).Inc()
	m.hookLag.Observe(latency.Seconds())
}

// GaugeFunc registers a gauge read at scrape time (queue depths).
func (m *Metrics) GaugeFunc(name, help string, f func() float64) {
	m.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f))
}

// CounterFunc registers a counter read at scrape time: a count the
// database keeps of rows never deleted, so that every process reports the
// deployment's, and a restart loses nothing.
func (m *Metrics) CounterFunc(name, help string, f func() float64) {
	m.Registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, f))
}
