package channeltest

import "sync"

// holder keeps messages from being answered until a group of them is in, so
// that a test sees that many sends in flight at once.
type holder struct {
	mu    sync.Mutex
	group *group
}

// group is messages held until they are all in.
type group struct {
	left int           // messages still to come
	all  chan struct{} // closed when the last one came
}

// hold makes the next n messages wait for each other.
func (h *holder) hold(n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.group = &group{left: n, all: make(chan struct{})}
}

// join adds a message to the group being held, if any, and waits for the
// rest of the group or until stop is closed.
func (h *holder) join(stop <-chan struct{}) {
	h.mu.Lock()
	g := h.group
	if g != nil {
		if g.left--; g.left == 0 {
			close(g.all)
			h.group = nil
		}
	}
	h.mu.Unlock()
	if g != nil {
		select {
		case <-g.all:
		case <-stop:
		}
	}
}
