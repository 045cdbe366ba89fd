package api

import (
	"sync"
	"time"

	"github.com/heraldhq/herald/store"
)

// authCache remembers which principal a temporary token speaks for, so an
// authenticated request costs no database read. An entry lives until its
// token expires; logging out, revoking and deleting users purge what they
// end, so the cache never lets an ended login through.
//
// A fill races a purge: a request may read a session from the database just
// before a logout revokes it and put it in the cache just after the logout
// purged. So every purge moves the cache to a new generation, and a fill is
// kept only if no purge happened since the read it carries began.
type authCache struct {
	mu      sync.RWMutex
	entries map[string]store.Principal // by token hash
	max     int
	gen     uint64 // purges so far
}

func newAuthCache(max int) *authCache {
	return &authCache{entries: make(map[string]store.Principal), max: max}
}

func (c *authCache) get(hash []byte, now time.Time) (store.Principal, bool) {
	c.mu.RLock()
	p, ok := c.entries[string(hash)]
	c.mu.RUnlock()
	if !ok || !now.Before(p.Expires) {
		return store.Principal{}, false
	}
	return p, true
}

// generation is taken before the database read of a fill, and handed to put.
func (c *authCache) generation() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen
}

// put keeps p for hash unless a purge happened since generation gen was taken: the
// principal may have been read before the purge's revocation committed.
func (c *authCache) put(hash []byte, p store.Principal, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if len(c.entries) >= c.max {
		clear(c.entries) // a cold cache only costs database reads
	}
	c.entries[string(hash)] = p
}

// purge drops every entry whose principal matches, and fills under way. Call it after
// the change it follows has committed.
func (c *authCache) purge(match func(store.Principal) bool) {
	c.mu.Lock()
	c.gen++
	for k, p := range c.entries {
		if match(p) {
			delete(c.entries, k)
		}
	}
	c.mu.Unlock()
}
