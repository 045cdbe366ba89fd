// Package gather batches work from a channel: it takes what the channel
// already holds, without waiting for more, so that a consumer that writes in
// batches (the engine's workers and finisher, a worker's ledger reads) gets
// as large a batch as the moment offers and never a late one.
package gather
