// Package latency counts latencies in a histogram of log-linear buckets,
// precise to 3 %, that merges, answers quantiles and travels in JSON: the
// API benchmark's load generator records every answer's latency in one and
// hands it to the benchmark on its standard output.
package latency
