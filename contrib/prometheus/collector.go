// Package prometheus exports a Jade runtime's scheduler metrics (spec
// §4.5) to Prometheus. It lives in its own module so the core module does
// not depend on client_golang.
package prometheus

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jadevm/jade/sched"
)

// Source is the scheduler to read (jade.Runtime.Bus().Scheduler()).
type Source interface {
	Metrics() sched.Metrics
}

// Collector is a prometheus.Collector over a scheduler snapshot. Each
// scrape takes one read-only snapshot (S-16).
type Collector struct {
	src Source

	runnable, waiting, live, active, pressure, inject *prometheus.Desc
	dispatches, steals, parks, localQueue             *prometheus.Desc
	engineLive, engineReductions                      *prometheus.Desc
}

// NewCollector returns a collector for src; register it with a
// prometheus.Registerer.
func NewCollector(src Source) *Collector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("jade_"+name, help, labels, nil)
	}
	return &Collector{
		src:              src,
		runnable:         d("runnable_tasks", "Tasks in run queues waiting for a worker."),
		waiting:          d("waiting_tasks", "Tasks parked in Waiting."),
		live:             d("live_tasks", "Tasks spawned and not completed."),
		active:           d("active_workers", "Workers not parked."),
		pressure:         d("queue_pressure", "Runnable tasks per worker."),
		inject:           d("inject_queue_tasks", "Tasks in the global inject queue."),
		dispatches:       d("worker_dispatches_total", "Slices run by a worker.", "worker"),
		steals:           d("worker_steals_total", "Successful steals by a worker.", "worker"),
		parks:            d("worker_parks_total", "Times a worker blocked.", "worker"),
		localQueue:       d("worker_local_queue_tasks", "Tasks in a worker's local ring.", "worker"),
		engineLive:       d("engine_live_tasks", "Live tasks of an engine.", "engine"),
		engineReductions: d("engine_reduction_limit", "Reduction budget per dispatch of an engine.", "engine"),
	}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.runnable, c.waiting, c.live, c.active, c.pressure, c.inject,
		c.dispatches, c.steals, c.parks, c.localQueue, c.engineLive, c.engineReductions} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	m := c.src.Metrics()
	g := func(d *prometheus.Desc, v float64, l ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, l...)
	}
	k := func(d *prometheus.Desc, v uint64, l ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), l...)
	}
	g(c.runnable, float64(m.RunnableTasks))
	g(c.waiting, float64(m.WaitingTasks))
	g(c.live, float64(m.LiveTasks))
	g(c.active, float64(m.ActiveWorkers))
	g(c.pressure, m.QueuePressure)
	g(c.inject, float64(m.InjectQueue))
	for _, w := range m.Workers {
		id := strconv.Itoa(w.ID)
		k(c.dispatches, w.Dispatches, id)
		k(c.steals, w.Steals, id)
		k(c.parks, w.Parks, id)
		g(c.localQueue, float64(w.LocalQueue), id)
	}
	for _, e := range m.Engines {
		g(c.engineLive, float64(e.LiveTasks), e.Name)
		g(c.engineReductions, float64(e.ReductionLimit), e.Name)
	}
}
