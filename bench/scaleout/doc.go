// Command scaleout measures how delivery throughput grows with worker
// processes: the same burst of e-mails, made through the API to fire at one
// instant, delivered by one Herald process with every role, then by a
// control process (api and engine) with one and with two worker-only
// processes on a nats-server, all as child processes on loopback ports.
// Every scenario sends as many mails at once in all (-conc, shared evenly by
// the sending processes), so that a second worker gains only what a second
// process gains, not more connections. One SMTP sink takes every mail and
// parses it whole, as a relay does, so that receiving costs CPU; -delay adds
// a relay's latency after that. Where the machine has two cores or more, the
// two workers are pinned to a core each (taskset); on one core they share
// it, which the output states. The verdict: two workers deliver at least as
// many mails a second as the single process. Run it with
// `go run ./bench/scaleout`; -h lists the flags.
package main
