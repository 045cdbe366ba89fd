// Command scaleout measures how delivery throughput grows with worker
// processes: the same burst of e-mails, made through the API to fire at one
// instant, delivered by one Herald process with every role, then by a
// control process (api and engine) with one and with two worker-only
// processes on a nats-server, all as child processes on loopback ports. One
// SMTP sink takes every mail and answers each after a fixed delay, as a real
// relay's latency, so that each process's send concurrency, not the CPU,
// bounds it. Run it with `go run ./bench/scaleout`; -h lists the flags.
package main
