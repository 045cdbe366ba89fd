package channeltest

import "sync"

// tally is what an HTTP fake keeps of the requests it answers: how many
// arrived, why it refused those it refused, and the failures it was told to
// answer next. The Teams and Google Chat servers embed it.
type tally struct {
	mu       sync.Mutex
	requests int
	refused  []string
	failN    int
	failure  Failure
}

// Refused returns why the server refused the requests it refused.
func (t *tally) Refused() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.refused...)
}

// Requests is how many requests arrived, accepted or not.
func (t *tally) Requests() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.requests
}

// arrived counts a request.
func (t *tally) arrived() {
	t.mu.Lock()
	t.requests++
	t.mu.Unlock()
}

// refusedFor keeps why a request was refused.
func (t *tally) refusedFor(msg string) {
	t.mu.Lock()
	t.refused = append(t.refused, msg)
	t.mu.Unlock()
}

// fail scripts the next n requests to fail as f.
func (t *tally) fail(n int, f Failure) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.failN, t.failure = n, f
}

// scripted uses up one scripted failure, if any is left, and says how the
// request is to fail.
func (t *tally) scripted() (Failure, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.failN == 0 {
		return 0, false
	}
	t.failN--
	return t.failure, true
}
