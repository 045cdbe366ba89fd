// Package recovery measures the recovery point and the recovery time of a
// lost control machine, as a Go benchmark that runs the drill of
// app/recovery_e2e_test.go with the real binaries: three clustered
// nats-servers (built from the module), control process A replicating into
// them, two worker processes sending 1,000 mails at 80 a second to an SMTP
// server on loopback, and a change made through A's API every 50 ms. When
// half the mails are in, A and its replicator are killed with SIGKILL.
//
// Each iteration runs the drill twice, on fresh clusters and folders, in
// turn: the baseline starts A again at once on its own folder (the recovery
// there was before the replica: the same disk); the loss deletes A's folder
// and starts B at once on an empty one, which waits for A's lease to lapse,
// restores the replica and takes over. Each drill reports
//
//   - RPO: how old the newest change the replacement has was at the kill
//     (the changes after it are lost);
//   - RTO: from the kill until the replacement answers /readyz 200;
//   - final: from the kill until every run is final and every mail in.
//
// The benchmark reports the medians, the worst RPO and the ratio of the two
// RTOs, and says whether the RPO stayed within replica.syncInterval. It is
// built with the bench tag only, so that go test ./... does not link a test
// binary of the whole service for a benchmark it would not run. Run it three
// times:
//
//	go test -tags bench -run '^$' -bench . -benchtime 3x -timeout 30m -v ./bench/recovery
package recovery
